package mcp

import (
	"fmt"
	"os"
	"sort"
)

// childEnv builds a stdio server's environment: the base variables the
// host has (baseEnvNames, per system), then extra with its ${NAME} and
// $NAME references expanded against the host's environment. A reference to
// an unset variable is an error naming it; values never appear in errors.
func childEnv(extra map[string]string) ([]string, error) {
	vars := make(map[string]string, len(baseEnvNames)+len(extra))
	for _, name := range baseEnvNames {
		if v, ok := os.LookupEnv(name); ok {
			vars[name] = v
		}
	}
	names := make([]string, 0, len(extra))
	for name := range extra {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var missing string
		vars[name] = os.Expand(extra[name], func(ref string) string {
			if ref == "$" {
				return "$" // $$ is a literal dollar
			}
			v, ok := os.LookupEnv(ref)
			if !ok && missing == "" {
				missing = ref
			}
			return v
		})
		if missing != "" {
			return nil, fmt.Errorf("env %s: variable %q is not set", name, missing)
		}
	}
	env := make([]string, 0, len(vars))
	for name, v := range vars {
		env = append(env, name+"="+v)
	}
	sort.Strings(env)
	return env, nil
}
