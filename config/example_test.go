package config_test

import (
	"errors"
	"fmt"

	"git.rickub.com/bots-garden/mini-me/config"
)

func ExampleParse() {
	cfg, err := config.Parse([]byte(`mcp:
  permissions: ask
  servers:
    - name: github
      url: https://api.githubcopilot.com/mcp/
      auth: {type: bearer, tokenEnv: GITHUB_PERSONAL_ACCESS_TOKEN}
      tools: [get_me, search_code]
      permissions: auto
    - name: finance
      command: simpl-resultat
      args: ["--mcp"]
      timeout: 1m
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range cfg.Servers {
		if s.Stdio() {
			fmt.Printf("%s: stdio %s %q, mode %s, timeout %v\n", s.Name, s.Command, s.Args, s.Permissions, s.Timeout)
		} else {
			fmt.Printf("%s: %s, token in $%s, tools %q, mode %s\n", s.Name, s.URL, s.Auth.TokenEnv, s.Tools, s.Permissions)
		}
	}
	// Output:
	// github: https://api.githubcopilot.com/mcp/, token in $GITHUB_PERSONAL_ACCESS_TOKEN, tools ["get_me" "search_code"], mode auto
	// finance: stdio simpl-resultat ["--mcp"], mode ask, timeout 1m0s
}

func ExampleLoad() {
	cfg, err := config.Load("testdata/architecture.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range cfg.Servers {
		fmt.Printf("%s (line %d): stdio %v, mode %s, confirm destructive %v, egress %s\n",
			s.Name, s.Line, s.Stdio(), s.Permissions, s.ConfirmDestructive, s.Egress)
	}
	// Output:
	// github (line 4): stdio false, mode auto, confirm destructive true, egress any
	// finance (line 11): stdio true, mode ask, confirm destructive true, egress any
}

// Every problem of a file is reported at once; errors.As gives the list.
func ExampleError() {
	_, err := config.Parse([]byte(`mcp:
  servers:
    - name: github
      url: https://api.githubcopilot.com/mcp/
      auth: {type: oath, tokenEnv: GITHUB_PERSONAL_ACCESS_TOKEN}
      permision: auto
    - name: finance
`))
	fmt.Println(err)

	var cerr *config.Error
	if errors.As(err, &cerr) {
		for _, p := range cerr.Problems {
			fmt.Printf("line %d, %s\n", p.Line, p.Field)
		}
	}
	// Output:
	// config: <input>:5:20: mcp.servers[0].auth.type: unknown auth type "oath" (want bearer, apikey or oauth)
	// config: <input>:6:7: mcp.servers[0].permision: unknown key "permision" (did you mean permissions?)
	// config: <input>:7:7: mcp.servers[1]: missing url or command (url for an HTTP server, command for a stdio server)
	// line 5, mcp.servers[0].auth.type
	// line 6, mcp.servers[0].permision
	// line 7, mcp.servers[1]
}
