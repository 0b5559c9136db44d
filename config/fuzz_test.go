package config_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// FuzzParse checks that any input gives either a valid configuration or a
// *config.Error with well-formed problems, never panics, and gives the same
// answer each time and through Decode.
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
	// Environment values with references, and bad environment names.
	for _, env := range []string{`{A: "${HOME}/x", B: "$$", C: "${", D: "$UNSET_1"}`, `{"1A": x}`, `{A-B: x}`, `{A: "\0"}`, `{A: [1]}`} {
		f.Add([]byte("mcp:\n  servers:\n    - name: s\n      command: cmd\n      env: " + env + "\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := config.Parse(data)
		again, err2 := config.Parse(data)
		decoded, err3 := config.Decode(bytes.NewReader(data), "<input>")
		if !reflect.DeepEqual(cfg, again) || !reflect.DeepEqual(cfg, decoded) || fmt.Sprint(err) != fmt.Sprint(err2) || fmt.Sprint(err) != fmt.Sprint(err3) {
			t.Fatalf("Parse twice and Decode disagree: %+v, %v; %+v, %v; %+v, %v", cfg, err, again, err2, decoded, err3)
		}
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

var (
	validName  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)
	envName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerName = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")
)

func hasNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }

// checkConfig checks what every valid configuration guarantees.
func checkConfig(t *testing.T, cfg *config.Config) {
	t.Helper()
	validMode := func(m permission.Mode) bool { return m == permission.ModeAsk || m == permission.ModeAuto }
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
		if !validName.MatchString(s.Name) || hasNUL(s.Command) || hasNUL(s.Dir) || slices.ContainsFunc(s.Args, hasNUL) {
			t.Errorf("server %q: bad name, command, dir or args: %+v", s.Name, s)
		}
		for k, v := range s.Env {
			if !envName.MatchString(k) || hasNUL(v) {
				t.Errorf("server %q: bad env %q=%q", s.Name, k, v)
			}
		}
		for k, v := range s.Headers {
			if !headerName.MatchString(k) || strings.EqualFold(k, "Authorization") || s.Auth != nil && strings.EqualFold(k, s.Auth.Header) ||
				strings.ContainsFunc(v, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
				t.Errorf("server %q: bad header %q: %q", s.Name, k, v)
			}
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
