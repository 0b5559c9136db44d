// Command conformance-client runs mini-me's MCP client through the
// scenarios of the official MCP conformance suite.
//
// The suite starts it once per scenario, with the server URL as the last
// argument and the scenario's name in MCP_CONFORMANCE_SCENARIO. Build it
// first, then hand the binary to the suite's runner:
//
//	go build -o bin/conformance-client ./examples/conformance-client
//	../shared/conformance/run.sh --spec-version 2026-07-28 -- ./bin/conformance-client
//
// The skills scenarios (sep-2640-client-*) are extension scenarios, which
// --spec-version skips; run them by name (--scenario).
//
// The client detects the server's protocol era by itself, so it ignores
// MCP_CONFORMANCE_PROTOCOL_VERSION.
//
// For the auth/* scenarios it is an OAuth host: its client identity is a
// Client ID Metadata Document URL, or the pre-registered credentials (and
// their issuer) the suite hands out in MCP_CONFORMANCE_CONTEXT; its
// "browser" fetches the authorization URL and reads the redirect's
// Location instead of opening a page. Everything else (discovery,
// registration, scopes, PKCE, iss, step-up) is the SDK's.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	neturl "net/url"
	"os"
	"strings"
	"time"

	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: conformance-client [-v] <server-url>")
		os.Exit(2)
	}
	url := os.Args[len(os.Args)-1]
	level := slog.LevelInfo
	if len(os.Args) > 2 && os.Args[1] == "-v" {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, scenario, url, log); err != nil {
		fmt.Fprintf(os.Stderr, "conformance-client: %s: %v\n", scenario, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, scenario, url string, log *slog.Logger) error {
	if use, ok := skillScenarios[scenario]; ok {
		return runSkills(ctx, url, use, log)
	}
	run, ok := scenarios[scenario]
	if !ok && !strings.HasPrefix(scenario, "auth/") {
		return fmt.Errorf("unknown scenario %q", scenario)
	}
	opts := &mcp.Options{
		Logger:     log,
		ClientInfo: mcp.Implementation{Name: "mini-me-conformance", Version: "0.1.0"},
		OnProgress: func(p mcp.Progress) { log.Info("progress", "name", p.Name, "progress", p.Progress, "total", p.Total) },
		// Accept every form with the schema's defaults (SEP-1034).
		Elicit: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			log.Info("elicitation", "message", req.Message)
			if req.Mode == "url" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		},
		// Declare sampling, URL elicitation and roots too, so that the
		// scenarios checking the capabilities' shape see them; no
		// scenario sends these requests (a URL request is declined).
		ElicitURL: true,
		Sample: func(_ context.Context, req *mcp.SampleRequest) (*mcp.SampleResult, error) {
			log.Info("sampling", "messages", len(req.Messages))
			return &mcp.SampleResult{Content: mcp.SamplingContents{{Type: "text", Text: "conformance"}}, Model: "none"}, nil
		},
		Roots: func(context.Context) ([]mcp.Root, error) { return []mcp.Root{}, nil },
	}
	tr := &mcp.HTTPTransport{URL: url}
	if strings.HasPrefix(scenario, "auth/") {
		a, err := authorizer(ctx, scenario, url, log)
		if err != nil {
			return err
		}
		defer a.CloseIdleConnections()
		tr.Credentials = a
		run = callEveryTool
	}
	c, err := mcp.Connect(ctx, tr, opts)
	if err != nil {
		return err
	}
	log.Info("connected", "era", c.Era(), "version", c.ProtocolVersion(), "server", c.ServerInfo().Name)
	err = run(ctx, c, log)
	return errors.Join(err, c.Close())
}

// clientMetadataURL is the client's identity where an authorization server
// accepts Client ID Metadata Documents.
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

// redirectURL is where the authorization server sends the browser back;
// nothing listens there, since headlessBrowser reads the redirect itself.
const redirectURL = "http://localhost:3000/callback"

// authorizer configures the SDK's OAuth client as a host would, with the
// credentials the suite hands out for some scenarios. The machine
// scenarios are hosts without a user: they choose a grant, as such a
// host's configuration does. DPoP is on everywhere; the SDK uses it where
// the authorization server supports it.
func authorizer(ctx context.Context, scenario, serverURL string, log *slog.Logger) (*oauth.Authorizer, error) {
	var given struct {
		ClientID      string `json:"client_id"`
		ClientSecret  string `json:"client_secret"`
		Issuer        string `json:"issuer"`
		PrivateKeyPEM string `json:"private_key_pem"`
		ValidJWT      string `json:"valid_jwt"`
		IDPClientID   string `json:"idp_client_id"`
		IDPIDToken    string `json:"idp_id_token"`
		IDPTokenURL   string `json:"idp_token_endpoint"`
	}
	if c := os.Getenv("MCP_CONFORMANCE_CONTEXT"); c != "" {
		if err := json.Unmarshal([]byte(c), &given); err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	cfg := oauth.Config{
		ClientID:    clientMetadataURL,
		RedirectURL: redirectURL,
		ClientName:  "mini-me-conformance",
		Browser:     headlessBrowser{},
		Logger:      log,
		DPoP:        true,
	}
	if given.ClientID != "" {
		cfg.ClientID, cfg.ClientSecret, cfg.Issuer = given.ClientID, oauth.Secret(given.ClientSecret), given.Issuer
	}
	switch scenario {
	case "auth/client-credentials-basic", "auth/client-credentials-jwt":
		cfg.Grant = oauth.ClientCredentials{}
		if given.PrivateKeyPEM != "" {
			key, err := oauth.ParsePrivateKey([]byte(given.PrivateKeyPEM))
			if err != nil {
				return nil, err
			}
			cfg.ClientKey = key
		}
	case "auth/wif-jwt-bearer":
		cfg.Grant = oauth.JWTBearer{Assertion: fixed(given.ValidJWT)}
	case "auth/enterprise-managed-authorization":
		cfg.Grant = oauth.EnterpriseManaged{IDToken: fixed(given.IDPIDToken), TokenEndpoint: given.IDPTokenURL, ClientID: given.IDPClientID}
	}
	if cfg.Issuer == "" && (cfg.ClientSecret != "" || cfg.ClientKey != nil || cfg.Grant != nil) {
		// The SDK sends a credential to its configured issuer only. Where
		// the suite names none, do what an operator does when configuring
		// a host: read which authorization server the server uses, and
		// pin it.
		iss, err := issuerOf(ctx, serverURL)
		if err != nil {
			return nil, err
		}
		log.Info("issuer pinned from the server's resource metadata", "issuer", iss)
		cfg.Issuer = iss
	}
	return oauth.New(serverURL, cfg)
}

// issuerOf returns the first authorization server that the Protected
// Resource Metadata (RFC 9728) of the server at serverURL names: at the
// path-based well-known URL, else at the root one.
func issuerOf(ctx context.Context, serverURL string) (string, error) {
	u, err := neturl.Parse(serverURL)
	if err != nil {
		return "", err
	}
	base := u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource"
	hc := &http.Client{Timeout: 10 * time.Second}
	defer hc.CloseIdleConnections()
	for _, at := range []string{base + strings.TrimSuffix(u.Path, "/"), base} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, at, nil)
		if err != nil {
			return "", err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return "", fmt.Errorf("resource metadata: %w", err)
		}
		var prm oauth.ResourceMetadata
		err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&prm)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && err == nil && len(prm.AuthorizationServers) > 0 {
			return prm.AuthorizationServers[0], nil
		}
	}
	return "", fmt.Errorf("the resource metadata of %s names no authorization server", serverURL)
}

// fixed returns an assertion source that always returns jwt, as a file the
// platform wrote would.
func fixed(jwt string) oauth.AssertionFunc {
	return func(context.Context) (oauth.Secret, error) { return oauth.Secret(jwt), nil }
}

// headlessBrowser stands in for the user's browser: the suite's
// authorization server redirects at once, without a login page.
type headlessBrowser struct{}

func (headlessBrowser) Authorize(ctx context.Context, authURL, _ string) (*neturl.URL, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	hc.CloseIdleConnections()
	loc, err := resp.Location()
	if err != nil {
		return nil, fmt.Errorf("authorization endpoint answered %d without a redirect", resp.StatusCode)
	}
	return loc, nil
}

type scenarioFunc func(context.Context, *mcp.Client, *slog.Logger) error

var scenarios = map[string]scenarioFunc{
	"initialize": func(context.Context, *mcp.Client, *slog.Logger) error { return nil },
	"tools_call": func(ctx context.Context, c *mcp.Client, log *slog.Logger) error {
		if _, err := c.ListTools(ctx); err != nil {
			return err
		}
		res, err := c.CallTool(ctx, "add_numbers", map[string]any{"a": 5, "b": 3})
		if err != nil {
			return err
		}
		log.Info("add_numbers", "result", res.Text())
		return nil
	},
	"sse-retry":                           callEveryTool,
	"request-metadata":                    callEveryTool,
	"http-standard-headers":               everything,
	"http-custom-headers":                 customHeaders,
	"http-invalid-tool-headers":           callEveryTool,
	"json-schema-ref-no-deref":            listTools,
	"json-schema-2020-12-preservation":    echoSchema,
	"sep-2322-client-request-state":       callEveryTool,
	"elicitation-sep1034-client-defaults": callEveryTool,
}

// callEveryTool lists the tools and calls each with arguments made from its
// input schema.
func callEveryTool(ctx context.Context, c *mcp.Client, log *slog.Logger) error {
	tools, err := c.ListTools(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range tools {
		args := sampleArgs(t.InputSchema)
		res, err := c.CallTool(ctx, t.Name, args)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t.Name, err))
			continue
		}
		log.Info("called", "tool", t.Name, "isError", res.IsError, "text", res.Text())
	}
	return errors.Join(errs...)
}

// listTools only lists: the scenario checks that no network $ref in a
// schema is fetched.
func listTools(ctx context.Context, c *mcp.Client, log *slog.Logger) error {
	tools, err := c.ListTools(ctx)
	log.Info("listed", "tools", len(tools))
	return err
}

// customHeaders calls the x-mcp-header tools with values that need each
// encoding rule, and with a null that must leave its header out.
func customHeaders(ctx context.Context, c *mcp.Client, log *slog.Logger) error {
	if _, err := c.ListTools(ctx); err != nil {
		return err
	}
	_, err := c.CallTool(ctx, "test_custom_headers", map[string]any{
		"region": "us-west1", "priority": 42, "verbose": true, "query": "status",
		"non_ascii_val": "Hello, 世界", "whitespace_val": " padded ", "leading_space_val": " lead",
		"trailing_space_val": "trail ", "internal_space_val": "a b c", "control_char_val": "bell\u0007",
		"crlf_val": "line1\r\nline2", "tab_val": "\ttabbed",
	})
	if err != nil {
		return err
	}
	_, err = c.CallTool(ctx, "test_custom_headers_null", map[string]any{"region": "eu", "priority": 1, "verbose": nil, "query": "q"})
	return err
}

// echoSchema sends the focal tool's input schema, as listed, back through
// the echo tool: it must arrive with every keyword intact.
func echoSchema(ctx context.Context, c *mcp.Client, log *slog.Logger) error {
	tools, err := c.ListTools(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if t.Name != "json_schema_2020_12_tool" {
			continue
		}
		res, err := c.CallTool(ctx, "json_schema_echo", map[string]any{"schema": t.InputSchema})
		if err != nil {
			return err
		}
		log.Info("echoed", "text", res.Text())
		return nil
	}
	return errors.New("json_schema_2020_12_tool not listed")
}

// everything calls every tool, gets every prompt and reads every resource.
func everything(ctx context.Context, c *mcp.Client, log *slog.Logger) error {
	errs := []error{callEveryTool(ctx, c, log)}
	if prompts, err := c.ListPrompts(ctx); err == nil {
		for _, p := range prompts {
			args := map[string]string{}
			for _, a := range p.Arguments {
				args[a.Name] = "x"
			}
			_, err := c.GetPrompt(ctx, p.Name, args)
			errs = append(errs, err)
		}
	}
	if resources, err := c.ListResources(ctx); err == nil {
		for _, r := range resources {
			_, err := c.ReadResource(ctx, r.URI)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// sampleArgs builds arguments that satisfy a simple object schema: the
// default or first enum value when there is one, else a value of the type.
func sampleArgs(schema json.RawMessage) map[string]any {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	args := map[string]any{}
	for name, raw := range s.Properties {
		args[name] = sampleValue(raw)
	}
	return args
}

func sampleValue(raw json.RawMessage) any {
	var p struct {
		Type    any               `json:"type"`
		Default json.RawMessage   `json:"default"`
		Enum    []json.RawMessage `json:"enum"`
		Props   json.RawMessage   `json:"properties"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return nil
	}
	if len(p.Default) > 0 {
		return p.Default
	}
	if len(p.Enum) > 0 {
		return p.Enum[0]
	}
	t, _ := p.Type.(string)
	if ts, ok := p.Type.([]any); ok && len(ts) > 0 {
		t, _ = ts[0].(string)
	}
	switch t {
	case "string":
		return "hello"
	case "integer", "number":
		return 1
	case "boolean":
		return true
	case "array":
		return []any{}
	case "object":
		return sampleArgs(raw)
	}
	return "hello"
}
