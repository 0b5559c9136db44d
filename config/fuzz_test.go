package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"git.rickub.com/bots-garden/mini-me/config"
)

// FuzzParse checks that any input gives either a valid configuration or a
// *config.Error with well-formed problems, and never panics.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed files: %v", err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, tt := range problemTests {
		f.Add([]byte(tt.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := config.Parse(data)
		if err != nil {
			checkError(t, data, cfg, err)
			return
		}
		checkConfig(t, cfg)
	})
}

func checkError(t *testing.T, data []byte, cfg *config.Config, err error) {
	t.Helper()
	var cerr *config.Error
	if !errors.As(err, &cerr) {
		t.Fatalf("error %v is not a *config.Error", err)
	}
	if cfg != nil {
		t.Errorf("got a config with the error")
	}
	if len(cerr.Problems) == 0 {
		t.Fatalf("*config.Error without problems")
	}
	// yaml.v3 also breaks lines at CR, NEL, LS and PS, and counts one more
	// line at the end of a file without a final line break.
	lines := 2
	for _, br := range []string{"\n", "\r", "\u0085", "\u2028", "\u2029"} {
		lines += strings.Count(string(data), br)
	}
	for i, p := range cerr.Problems {
		if p.File != "<input>" || p.Message == "" || p.Line < 0 || p.Line > lines || p.Column < 0 {
			t.Errorf("bad problem %+v (input has at most %d lines)", p, lines)
		}
		if i > 0 && p.Line < cerr.Problems[i-1].Line {
			t.Errorf("problems out of order: %+v after %+v", p, cerr.Problems[i-1])
		}
	}
	if got := strings.Count(err.Error(), "\n") + 1; got < len(cerr.Problems) {
		t.Errorf("error text has %d lines for %d problems", got, len(cerr.Problems))
	}
}

// checkConfig checks what every valid configuration guarantees.
func checkConfig(t *testing.T, cfg *config.Config) {
	t.Helper()
	validMode := func(m config.Mode) bool { return m == config.ModeAsk || m == config.ModeAuto }
	if !validMode(cfg.Permissions) {
		t.Errorf("global mode %q", cfg.Permissions)
	}
	names := map[string]bool{}
	for _, s := range cfg.Servers {
		lower := strings.ToLower(s.Name)
		if s.Name == "" || len(s.Name) > config.MaxNameLength || names[lower] {
			t.Errorf("bad or duplicate name %q", s.Name)
		}
		names[lower] = true
		if (s.URL == "") == (s.Command == "") {
			t.Errorf("server %q: URL %q, Command %q: want exactly one", s.Name, s.URL, s.Command)
		}
		if s.Stdio() && (s.Auth != nil || s.Headers != nil) || !s.Stdio() && (s.Args != nil || s.Env != nil || s.Dir != "") {
			t.Errorf("server %q mixes transports: %+v", s.Name, s)
		}
		if s.Tools != nil && len(s.Tools) == 0 {
			t.Errorf("server %q: empty, non-nil allowlist", s.Name)
		}
		if s.Auth != nil && ((s.Auth.TokenEnv == "") != (s.Auth.Type == config.AuthOAuth) || (s.Auth.Type == config.AuthAPIKey) != (s.Auth.Header != "") ||
			s.Auth.Type != config.AuthOAuth && (s.Auth.ClientID != "" || s.Auth.Scopes != nil || s.Auth.ClientSecretEnv != "" || s.Auth.ClientSecretFile != "")) {
			t.Errorf("server %q: bad auth %+v", s.Name, *s.Auth)
		}
		if !validMode(s.Permissions) || (s.Egress != config.EgressAny && s.Egress != config.EgressLocal) ||
			s.Timeout < 0 || s.ConnectTimeout < 0 || s.Line < 1 {
			t.Errorf("server %q: bad resolved values %+v", s.Name, s)
		}
	}
}
