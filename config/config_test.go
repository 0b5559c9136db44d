package config_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/permission"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// lines joins its arguments into a YAML file, one per line.
func lines(l ...string) string { return strings.Join(l, "\n") + "\n" }

// The snippets of ARCHITECTURE.md and of the issue, copied verbatim into
// testdata, must parse to exactly this.
func TestParseSeedFormat(t *testing.T) {
	want := &config.Config{
		Permissions:        permission.ModeAsk,
		Sampling:           permission.ModeAsk,
		ConfirmDestructive: true,
		Servers: []config.Server{
			{
				Name:               "github",
				URL:                "https://api.githubcopilot.com/mcp/",
				Auth:               &config.Auth{Type: config.AuthBearer, TokenEnv: "GITHUB_PERSONAL_ACCESS_TOKEN"},
				Tools:              []string{"get_me", "list_repositories", "search_code"},
				Permissions:        permission.ModeAuto,
				Sampling:           permission.ModeAsk,
				ConfirmDestructive: true,
				Egress:             config.EgressAny,
				Line:               4,
			},
			{
				Name:               "finance",
				Command:            "simpl-resultat",
				Args:               []string{"--mcp"},
				Permissions:        permission.ModeAsk,
				Sampling:           permission.ModeAsk,
				ConfirmDestructive: true,
				Egress:             config.EgressAny,
				Line:               11,
			},
		},
	}
	for _, file := range []string{"testdata/architecture.yaml", "testdata/issue.yaml"} {
		t.Run(file, func(t *testing.T) {
			got, err := config.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			want.File = file
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Load(%s)\n got %+v\nwant %+v", file, got, want)
			}
			if got.Servers[0].Stdio() || !got.Servers[1].Stdio() {
				t.Errorf("Stdio() = %v, %v; want false, true", got.Servers[0].Stdio(), got.Servers[1].Stdio())
			}
		})
	}
}

// testdata/full.yaml, the example of the documentation of Config, uses every
// key.
func TestParseEveryKey(t *testing.T) {
	got, err := config.Load("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	global := []string{"file:///home/me/projects/site"}
	want := &config.Config{
		File:               "testdata/full.yaml",
		Roots:              global,
		Permissions:        permission.ModeAsk,
		Sampling:           permission.ModeAsk,
		ConfirmDestructive: true,
		Servers: []config.Server{
			{
				Name:               "github",
				URL:                "https://api.githubcopilot.com/mcp/",
				Auth:               &config.Auth{Type: config.AuthBearer, TokenEnv: "GITHUB_PERSONAL_ACCESS_TOKEN"},
				Headers:            map[string]string{"X-MCP-Toolsets": "repos,issues"},
				Tools:              []string{"get_me", "list_repositories", "search_code"},
				Skills:             []string{"code-review"},
				Permissions:        permission.ModeAuto,
				Sampling:           permission.ModeAsk,
				ConfirmDestructive: true,
				Timeout:            30 * time.Second,
				ConnectTimeout:     10 * time.Second,
				Egress:             config.EgressAny,
				Tasks:              config.TasksRequired,
				Line:               7,
				Roots:              []string{"file:///home/me/projects/site", "file:///home/me/notes"},
				ProtocolVersion:    "2025-11-25",
			},
			{
				Name:               "search",
				URL:                "http://search.internal:8080/mcp",
				Auth:               &config.Auth{Type: config.AuthAPIKey, TokenEnv: "SEARCH_API_KEY", Header: "X-Search-Key"},
				InsecureHTTP:       true,
				Permissions:        permission.ModeAsk,
				Sampling:           permission.ModeAsk,
				ConfirmDestructive: true,
				Egress:             config.EgressAny,
				Line:               25,
				Roots:              global,
			},
			{
				Name: "linear",
				URL:  "https://mcp.linear.app/mcp",
				Auth: &config.Auth{Type: config.AuthOAuth, ClientID: "https://agent.example.com/client-metadata.json",
					Scopes: []string{"read", "write"}, RedirectURL: "http://127.0.0.1:8976/callback"},
				Permissions: permission.ModeAsk, Sampling: permission.ModeAsk, ConfirmDestructive: true, Egress: config.EgressAny, Line: 32, Roots: global,
			},
			{
				Name: "crm",
				URL:  "https://crm.example.com/mcp",
				Auth: &config.Auth{Type: config.AuthOAuth, ClientID: "mini-me-crm", ClientSecretEnv: "CRM_CLIENT_SECRET",
					Issuer: "https://login.example.com", TokenEndpointAuth: config.TokenAuthPost},
				Permissions: permission.ModeAsk, Sampling: permission.ModeAsk, ConfirmDestructive: true, Egress: config.EgressAny, Line: 39, Roots: global,
			},
			{
				Name: "docs",
				URL:  "https://docs.example.com/mcp",
				Auth: &config.Auth{Type: config.AuthOAuth, ClientID: "mini-me-docs", ClientSecretFile: "/run/secrets/docs-client-secret",
					Issuer: "https://login.example.com"},
				Permissions: permission.ModeAsk, Sampling: permission.ModeAsk, ConfirmDestructive: true, Egress: config.EgressAny, Line: 47, Roots: global,
			},
			{
				Name: "nightly",
				URL:  "https://reports.example.com/mcp",
				Auth: &config.Auth{Type: config.AuthOAuth, Grant: config.GrantClientCredentials, ClientID: "nightly-agent",
					ClientKeyFile: "/run/secrets/nightly-agent.pem", TokenEndpointAuth: config.TokenAuthPrivateKeyJWT, DPoP: true,
					Issuer: "https://login.example.com"},
				Permissions: permission.ModeAsk, Sampling: permission.ModeAsk, ConfirmDestructive: true, Egress: config.EgressAny, Line: 54, Roots: global,
			},
			{
				Name: "billing",
				URL:  "https://billing.example.com/mcp",
				Auth: &config.Auth{Type: config.AuthOAuth, Grant: config.GrantClientCredentials, ClientID: "billing-agent",
					ClientKeyEnv: "BILLING_AGENT_KEY", Issuer: "https://login.example.com"},
				Permissions: permission.ModeAsk, Sampling: permission.ModeAsk, ConfirmDestructive: true, Egress: config.EgressAny, Line: 64, Roots: global,
			},
			{
				Name: "builds",
				URL:  "https://ci.example.com/mcp",
				Auth: &config.Auth{Type: config.AuthOAuth, Grant: config.GrantJWTBearer, AssertionFile: "/var/run/secrets/tokens/mcp-token",
					Issuer: "https://ci.example.com/auth"},
				Permissions: permission.ModeAsk, Sampling: permission.ModeAsk, ConfirmDestructive: true, Egress: config.EgressAny, Line: 72, Roots: global,
			},
			{
				Name: "wiki",
				URL:  "https://wiki.corp.example.com/mcp",
				Auth: &config.Auth{Type: config.AuthOAuth, Grant: config.GrantEnterpriseManaged, ClientID: "mini-me-wiki",
					ClientSecretEnv: "WIKI_CLIENT_SECRET", AssertionCommand: []string{"corp-sso", "id-token"},
					IDPTokenEndpoint: "https://sso.corp.example.com/oauth2/token", IDPClientID: "mini-me", IDPClientSecretEnv: "SSO_CLIENT_SECRET",
					Issuer: "https://auth.wiki.corp.example.com"},
				Permissions: permission.ModeAsk, Sampling: permission.ModeAsk, ConfirmDestructive: true, Egress: config.EgressAny, Line: 79, Roots: global,
			},
			{
				Name:               "finance",
				Command:            "simpl-resultat",
				Args:               []string{"--mcp"},
				Env:                map[string]string{"LEDGER": "${HOME}/ledger.db"},
				Dir:                "/srv/finance",
				Prompts:            []string{"monthly_report"},
				Resources:          []string{"ledger://accounts", "ledger://accounts/{id}"},
				Permissions:        permission.ModeAsk,
				Sampling:           permission.ModeAsk,
				ConfirmDestructive: true,
				Egress:             config.EgressLocal,
				Line:               91,
				Roots:              global,
			},
		},
		Skills: []string{"./skills"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseValid(t *testing.T) {
	defaults := config.Config{File: "<input>", Permissions: permission.ModeAsk, Sampling: permission.ModeAsk, ConfirmDestructive: true}
	tests := []struct {
		name   string
		in     string
		want   config.Config
		server *config.Server // the only server, when there is one
	}{
		{name: "empty file", in: "", want: defaults},
		{name: "comments only", in: "# nothing yet\n", want: defaults},
		{name: "document marker only", in: "---\n", want: defaults},
		{name: "null document", in: "~\n", want: defaults},
		{name: "empty mcp", in: "mcp:\n", want: defaults},
		{name: "empty servers", in: lines("mcp:", "  servers:"), want: defaults},
		{name: "servers commented out", in: lines("mcp:", "  servers: []", "  # - name: x"), want: defaults},
		{
			name: "global auto and no confirmation",
			in:   lines("mcp:", "  permissions: auto", "  confirmDestructive: false"),
			want: config.Config{File: "<input>", Permissions: permission.ModeAuto, Sampling: permission.ModeAsk, ConfirmDestructive: false},
		},
		{
			name: "server inherits global settings",
			in:   lines("mcp:", "  permissions: auto", "  confirmDestructive: false", "  servers:", "    - {name: a, command: x}"),
			want: config.Config{File: "<input>", Permissions: permission.ModeAuto, Sampling: permission.ModeAsk},
			server: &config.Server{Name: "a", Command: "x", Permissions: permission.ModeAuto, Sampling: permission.ModeAsk,
				ConfirmDestructive: false, Egress: config.EgressAny, Line: 5},
		},
		{
			name: "auto tools do not make sampling auto",
			in:   lines("mcp:", "  permissions: auto", "  servers:", "    - {name: a, command: x, permissions: auto}"),
			want: config.Config{File: "<input>", Permissions: permission.ModeAuto, Sampling: permission.ModeAsk, ConfirmDestructive: true},
			server: &config.Server{Name: "a", Command: "x", Permissions: permission.ModeAuto, Sampling: permission.ModeAsk,
				ConfirmDestructive: true, Egress: config.EgressAny, Line: 4},
		},
		{
			name: "server inherits global sampling",
			in:   lines("mcp:", "  sampling: auto", "  servers:", "    - {name: a, command: x}"),
			want: config.Config{File: "<input>", Permissions: permission.ModeAsk, Sampling: permission.ModeAuto, ConfirmDestructive: true},
			server: &config.Server{Name: "a", Command: "x", Permissions: permission.ModeAsk, Sampling: permission.ModeAuto,
				ConfirmDestructive: true, Egress: config.EgressAny, Line: 4},
		},
		{
			name: "server overrides global sampling",
			in:   lines("mcp:", "  sampling: auto", "  servers:", "    - {name: a, command: x, sampling: ask}"),
			want: config.Config{File: "<input>", Permissions: permission.ModeAsk, Sampling: permission.ModeAuto, ConfirmDestructive: true},
			server: &config.Server{Name: "a", Command: "x", Permissions: permission.ModeAsk, Sampling: permission.ModeAsk,
				ConfirmDestructive: true, Egress: config.EgressAny, Line: 4},
		},
		{
			name: "server overrides global settings",
			in: lines("mcp:", "  permissions: auto", "  servers:",
				"    - {name: a, command: x, permissions: ask, confirmDestructive: false}"),
			want: config.Config{File: "<input>", Permissions: permission.ModeAuto, Sampling: permission.ModeAsk, ConfirmDestructive: true},
			server: &config.Server{Name: "a", Command: "x", Permissions: permission.ModeAsk, Sampling: permission.ModeAsk,
				ConfirmDestructive: false, Egress: config.EgressAny, Line: 4},
		},
		{
			name: "apikey header defaults to X-API-Key",
			in: lines("mcp:", "  servers:", "    - name: a", "      url: http://localhost/mcp",
				"      auth: {type: apikey, tokenEnv: K}"),
			want: defaults,
			server: &config.Server{Name: "a", URL: "http://localhost/mcp",
				Auth:        &config.Auth{Type: config.AuthAPIKey, TokenEnv: "K", Header: config.DefaultAPIKeyHeader},
				Permissions: permission.ModeAsk, Sampling: permission.ModeAsk, ConfirmDestructive: true, Egress: config.EgressAny, Line: 3},
		},
		{
			name: "scalars are taken as written and env values stay raw",
			in: lines("mcp:", "  servers:", "    - name: 42", "      command: ./srv",
				"      args: [--port, 8080, 0x1F, true, 1.50, '']",
				`      env: {A: "${HOME}/x", B: "", C: 007, D: $PATH}`),
			want: defaults,
			server: &config.Server{Name: "42", Command: "./srv",
				Args:        []string{"--port", "8080", "0x1F", "true", "1.50", ""},
				Env:         map[string]string{"A": "${HOME}/x", "B": "", "C": "007", "D": "$PATH"},
				Permissions: permission.ModeAsk, Sampling: permission.ModeAsk, ConfirmDestructive: true, Egress: config.EgressAny, Line: 3},
		},
		{
			name: "longest name, IPv6 host, durations",
			in: lines("mcp:", "  servers:", "    - name: "+strings.Repeat("a", config.MaxNameLength),
				"      url: https://[::1]:8443/mcp?x=1", "      timeout: 1m30s", "      connectTimeout: 500ms",
				"      headers: {x-trace: '', Accept-Language: fr}"),
			want: defaults,
			server: &config.Server{Name: strings.Repeat("a", config.MaxNameLength), URL: "https://[::1]:8443/mcp?x=1",
				Timeout: 90 * time.Second, ConnectTimeout: 500 * time.Millisecond,
				Headers:     map[string]string{"x-trace": "", "Accept-Language": "fr"},
				Permissions: permission.ModeAsk, Sampling: permission.ModeAsk, ConfirmDestructive: true, Egress: config.EgressAny, Line: 3},
		},
		{
			name: "anchors without aliases are harmless",
			in:   lines("mcp:", "  servers:", "    - &s {name: a, command: x}"),
			want: defaults,
			server: &config.Server{Name: "a", Command: "x",
				Permissions: permission.ModeAsk, Sampling: permission.ModeAsk, ConfirmDestructive: true, Egress: config.EgressAny, Line: 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := config.Parse([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if tt.server != nil {
				want.Servers = []config.Server{*tt.server}
			}
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("got  %+v\nwant %+v", *got, want)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	_, err := config.Load(filepath.Join(t.TempDir(), "missing.yaml"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "config: ") {
		t.Errorf("missing file: got %v, want a config: error matching fs.ErrNotExist", err)
	}
	var cerr *config.Error
	if errors.As(err, &cerr) {
		t.Errorf("missing file: got a *config.Error, want an I/O error")
	}

	dir := t.TempDir()
	_, err = config.Load(dir)
	if err == nil || errors.As(err, &cerr) || strings.Count(err.Error(), dir) != 1 {
		t.Errorf("directory: got %v, want an I/O error naming %s once", err, dir)
	}

	path := filepath.Join(t.TempDir(), "servers.yaml")
	if err := os.WriteFile(path, []byte(lines("mcp:", "  servers:", "    - name: a", "      url: ftp://x")), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = config.Load(path)
	want := "config: " + path + `:4:12: mcp.servers[0].url: unsupported URL scheme "ftp" (want http or https)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// failingReader fails after its data, as a broken disk or pipe would.
type failingReader struct{ data []byte }

var errDisk = errors.New("disk on fire")

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, errDisk
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestDecode(t *testing.T) {
	cfg, err := config.Decode(strings.NewReader(lines("mcp:", "  permissions: auto")), "inline.yaml")
	if err != nil || cfg.File != "inline.yaml" || cfg.Permissions != permission.ModeAuto {
		t.Errorf("Decode: got %+v, %v", cfg, err)
	}

	_, err = config.Decode(&failingReader{data: []byte("mcp:\n")}, "pipe")
	if !errors.Is(err, errDisk) || !strings.HasPrefix(err.Error(), "config: read pipe: ") {
		t.Errorf("read error: got %v, want it wrapped with config: read pipe:", err)
	}
}

// A file over the limit is refused without reading all of it.
func TestSizeLimit(t *testing.T) {
	padding := "#" + strings.Repeat(" ", config.MaxFileSize) + "\n"
	r := strings.NewReader("mcp:\n" + padding + padding)
	_, err := config.Decode(r, "big.yaml")
	var cerr *config.Error
	if !errors.As(err, &cerr) || len(cerr.Problems) != 1 || !strings.Contains(cerr.Problems[0].Message, "larger than 1048576 bytes") {
		t.Fatalf("got %v, want one problem saying the file is too large", err)
	}
	if read := int64(2*len(padding)+5) - int64(r.Len()); read != config.MaxFileSize+1 {
		t.Errorf("read %d bytes, want %d", read, config.MaxFileSize+1)
	}

	// Exactly at the limit is fine.
	exact := "mcp:\n#" + strings.Repeat(" ", config.MaxFileSize-7) + "\n"
	if len(exact) != config.MaxFileSize {
		t.Fatalf("test bug: len = %d", len(exact))
	}
	if _, err := config.Parse([]byte(exact)); err != nil {
		t.Errorf("file of exactly MaxFileSize bytes: %v", err)
	}
}

// The package never reads the environment: the token's value cannot reach
// the Config or any error, even when the variable is set.
func TestTokenNeverRead(t *testing.T) {
	const token = "ghp_SENTINEL_never_in_output_1234567890"
	t.Setenv("GITHUB_PERSONAL_ACCESS_TOKEN", token)
	t.Setenv("SEARCH_API_KEY", token)
	t.Setenv("HOME", token)
	cfg, err := config.Load("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dump, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(dump), "GITHUB_PERSONAL_ACCESS_TOKEN") {
		t.Fatalf("test bug: the dump misses nested fields: %s", dump)
	}
	if strings.Contains(string(dump), token) {
		t.Errorf("token value found in the config: %s", dump)
	}
	if finance := cfg.Servers[len(cfg.Servers)-1]; finance.Env["LEDGER"] != "${HOME}/ledger.db" {
		t.Errorf("env value expanded: %q", finance.Env["LEDGER"])
	}
}

// A token pasted where a name or a URL belongs is never repeated in errors.
func TestSecretsNotInErrors(t *testing.T) {
	const secret = "sk-live-SENTINEL/0123456789abcdef"
	in := lines("mcp:", "  servers:",
		"    - name: a",
		"      url: https://user:"+secret+"@example.com/mcp",
		"      auth: {type: bearer, tokenEnv: '"+secret+"', token: '"+secret+"'}",
		"      headers: {X-Key: \""+secret+"\\n\", Authorization: 'Bearer "+secret+"'}",
		"    - name: b",
		"      command: x",
		"      args: [\""+secret+"\\0\"]",
		"      env: {T: \""+secret+"\\0\"}",
		"      url: '"+secret+"'",
	)
	_, err := config.Parse([]byte(in))
	var cerr *config.Error
	if !errors.As(err, &cerr) {
		t.Fatalf("got %v, want a *config.Error", err)
	}
	// Every place holding the secret is reported, without repeating it.
	wantFields := []string{
		"mcp.servers[0].url", "mcp.servers[0].auth.tokenEnv", "mcp.servers[0].auth.token",
		"mcp.servers[0].headers.X-Key", "mcp.servers[0].headers.Authorization",
		"mcp.servers[1].command", "mcp.servers[1].args[0]", "mcp.servers[1].env.T", "mcp.servers[1].url",
	}
	var gotFields []string
	for _, p := range cerr.Problems {
		gotFields = append(gotFields, p.Field)
	}
	if !reflect.DeepEqual(gotFields, wantFields) {
		t.Errorf("fields reported:\n got %q\nwant %q", gotFields, wantFields)
	}
	if strings.Contains(err.Error(), "SENTINEL") {
		t.Errorf("secret repeated in the error:\n%v", err)
	}
}
