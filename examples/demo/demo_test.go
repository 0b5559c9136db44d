package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// serveEnv makes the test binary a stdio server: finance, speaking the
// versions listed (comma-separated).
const serveEnv = "DEMO_TEST_SERVE_VERSIONS"

func TestMain(m *testing.M) {
	if v := os.Getenv(serveEnv); v != "" {
		s := Finance()
		s.Versions = strings.Split(v, ",")
		if err := s.ServeStdio(context.Background(), os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func serve(t *testing.T, s *Server) string {
	url, stop, err := Serve(s)
	require.NoError(t, err)
	t.Cleanup(stop)
	return url
}

func stdio(t *testing.T, versions string) mcp.Transport {
	exe, err := os.Executable()
	require.NoError(t, err)
	return &mcp.CommandTransport{Command: exe, Env: map[string]string{serveEnv: versions}}
}

// Our own client finds each server's era, over both transports, and uses
// its tools.
func TestEras(t *testing.T) {
	legacyText := Text()
	legacyText.Versions = []string{Legacy}
	for _, tc := range []struct {
		name      string
		transport func(t *testing.T) mcp.Transport
		era       mcp.Era
		version   string
		tools     []string
		call      string
		args      any
		want      string
	}{
		{"text over HTTP", func(t *testing.T) mcp.Transport { return &mcp.HTTPTransport{URL: serve(t, Text())} },
			mcp.EraModern, Modern, []string{"count", "transform", "sort_lines"}, "count", map[string]string{"text": "a b"}, "2 words, 3 characters, 1 line"},
		{"notes over HTTP", func(t *testing.T) mcp.Transport { return &mcp.HTTPTransport{URL: serve(t, Notes())} },
			mcp.EraLegacy, Legacy, []string{"list_notes", "read_note", "save_note", "delete_note"}, "read_note", map[string]string{"title": "shopping"}, "bread, cheese, coffee"},
		{"text, legacy only, over HTTP", func(t *testing.T) mcp.Transport { return &mcp.HTTPTransport{URL: serve(t, legacyText)} },
			mcp.EraLegacy, Legacy, []string{"count", "transform", "sort_lines"}, "transform", map[string]string{"text": "ab", "to": "reverse"}, "ba"},
		{"finance over stdio", func(t *testing.T) mcp.Transport { return stdio(t, Modern+","+Legacy) },
			mcp.EraModern, Modern, []string{"list_profiles", "select_profile", "list_transactions", "spending_summary", "recategorize"}, "list_profiles", nil, "perso: Personal\npro: Freelance"},
		{"finance, legacy only, over stdio", func(t *testing.T) mcp.Transport { return stdio(t, Legacy) },
			mcp.EraLegacy, Legacy, []string{"list_profiles", "select_profile", "list_transactions", "spending_summary", "recategorize"}, "select_profile", map[string]string{"profile": "pro"}, "selected profile pro (Freelance, 3 transactions)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := mcp.Connect(ctx, tc.transport(t), nil)
			require.NoError(t, err)
			defer c.Close()
			assert.Equal(t, tc.era, c.Era())
			assert.Equal(t, tc.version, c.ProtocolVersion())
			assert.True(t, strings.HasPrefix(c.ServerInfo().Name, "demo-"), c.ServerInfo().Name)
			assert.NotEmpty(t, c.Instructions())

			tools, err := c.ListTools(ctx)
			require.NoError(t, err)
			var names []string
			for _, tool := range tools {
				names = append(names, tool.Name)
				require.NotNil(t, tool.Annotations, tool.Name)
				assert.NotEmpty(t, tool.Title, tool.Name)
				assert.Contains(t, string(tool.InputSchema), `"type":"object"`)
			}
			assert.Equal(t, tc.tools, names)

			res, err := c.CallTool(ctx, tc.call, tc.args)
			require.NoError(t, err)
			assert.False(t, res.IsError, res.Text())
			assert.Equal(t, tc.want, res.Text())
		})
	}
}

func TestAnnotations(t *testing.T) {
	ctx := context.Background()
	c, err := mcp.Connect(ctx, &mcp.HTTPTransport{URL: serve(t, Notes())}, nil)
	require.NoError(t, err)
	defer c.Close()
	tools, err := c.ListTools(ctx)
	require.NoError(t, err)
	hints := map[string]string{}
	for _, tool := range tools {
		a := tool.Annotations
		hints[tool.Name] = map[bool]string{true: "read-only", false: "writes"}[a.ReadOnly()]
		if a.DestructiveHint != nil && *a.DestructiveHint {
			hints[tool.Name] += ", destructive"
		}
		require.NotNil(t, a.OpenWorldHint)
		assert.False(t, *a.OpenWorldHint)
	}
	assert.Equal(t, map[string]string{"list_notes": "read-only", "read_note": "read-only",
		"save_note": "writes", "delete_note": "writes, destructive"}, hints)
}

// post sends one JSON-RPC message and returns the status and the body.
func post(t *testing.T, url, body string, header ...string) (int, string) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func TestHTTPAnswers(t *testing.T) {
	text, notes := serve(t, Text()), serve(t, Notes())
	for _, tc := range []struct {
		name, url, body string
		header          []string
		status          int
		want            string
	}{
		{"modern discover", text, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + `}}`, nil,
			200, `"supportedVersions":["2026-07-28","2025-11-25"]`},
		{"modern list", text, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta + `}}`, nil,
			200, `"resultType":"complete"`},
		{"unsupported version", text, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}`, nil,
			400, `"code":-32022,"message":"unsupported protocol version","data":{"requested":"2099-01-01","supported":["2026-07-28","2025-11-25"]}`},
		{"unknown method", text, `{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{` + modernMeta + `}}`, nil,
			404, `"code":-32601`},
		{"unknown tool", text, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope",` + modernMeta + `}}`, nil,
			400, `"code":-32602,"message":"unknown tool \"nope\""`},
		{"tool error", text, `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"transform","arguments":{"text":"x","to":"sideways"},` + modernMeta + `}}`, nil,
			200, `"isError":true`},
		{"modern request to a legacy server", notes, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + `}}`, nil,
			400, `no valid session`},
		{"no session", notes, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil,
			400, `no valid session`},
		{"unknown session", notes, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, []string{"Mcp-Session-Id", "deadbeef"},
			404, `Session not found`},
		{"notification", notes, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil, 202, ``},
		{"malformed", notes, `{"jsonrpc":`, nil, 400, `"code":-32700`},
		{"too large", notes, `{"jsonrpc":"2.0","id":1,"method":"x","params":{"p":"` + strings.Repeat("x", MaxMessageSize) + `"}}`, nil,
			413, `message too large`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, tc.url, tc.body, tc.header...)
			assert.Equal(t, tc.status, status, body)
			assert.Contains(t, body, tc.want)
		})
	}
}

func TestHTTPLegacySession(t *testing.T) {
	url := serve(t, Notes())
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	require.Len(t, sid, 32)

	status, body := post(t, url, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, "Mcp-Session-Id", sid)
	assert.Equal(t, 200, status)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":2,"result":{}}`, body)

	del, err := http.NewRequest(http.MethodDelete, url, nil)
	require.NoError(t, err)
	del.Header.Set("Mcp-Session-Id", sid)
	resp, err = http.DefaultClient.Do(del)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	status, _ = post(t, url, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, "Mcp-Session-Id", sid)
	assert.Equal(t, 404, status, "the session ended")

	resp, err = http.Get(url)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

func TestServeStdio(t *testing.T) {
	in := strings.Join([]string{
		`not json`,
		``,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"spending_summary","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_profiles","arguments":{"extra":1}}}`,
	}, "\n")
	var out bytes.Buffer
	require.NoError(t, Finance().ServeStdio(context.Background(), strings.NewReader(in), &out))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 5, out.String())
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, lines[0])
	assert.Contains(t, lines[1], `"id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"demo-finance","version":"1.0.0"}}`)
	assert.Contains(t, lines[2], `"id":2,"result":{"capabilities":{"tools":{}},"instructions":`)
	assert.Contains(t, lines[2], `"protocolVersion":"2025-11-25"`)
	assert.Contains(t, lines[3], `"isError":true`)
	assert.Contains(t, lines[3], `no profile selected`)
	assert.Contains(t, lines[4], `invalid arguments: json: unknown field \"extra\"`)

	err := Finance().ServeStdio(context.Background(), strings.NewReader(strings.Repeat("x", MaxMessageSize+1)+"\n"), io.Discard)
	assert.ErrorContains(t, err, "demo: reading requests: bufio.Scanner: token too long")
}

// callTool calls a tool of s as a modern client would.
func callTool(t *testing.T, s *Server, name string, args string) (string, bool) {
	t.Helper()
	res, rerr := s.call(context.Background(), json.RawMessage(`{"name":"`+name+`","arguments":`+args+`}`), true)
	require.Nil(t, rerr)
	r := res.(map[string]any)
	return r["content"].([]map[string]any)[0]["text"].(string), r["isError"].(bool)
}

func TestTools(t *testing.T) {
	text, notes, finance := Text(), Notes(), Finance()
	for _, tc := range []struct {
		name    string
		s       *Server
		tool    string
		args    string
		want    string
		isError bool
	}{
		{"count", text, "count", `{"text":"héllo  world\nagain\n"}`, "3 words, 19 characters, 2 lines", false},
		{"count nothing", text, "count", `{"text":""}`, "0 words, 0 characters, 0 lines", false},
		{"upper", text, "transform", `{"text":"été","to":"upper"}`, "ÉTÉ", false},
		{"title", text, "transform", `{"text":"to be or\tnot","to":"title"}`, "To Be Or\tNot", false},
		{"reverse", text, "transform", `{"text":"été","to":"reverse"}`, "été", false},
		{"unknown transformation", text, "transform", `{"text":"a","to":"sideways"}`, `unknown transformation "sideways": use upper, lower, title or reverse`, true},
		{"sort unique", text, "sort_lines", `{"text":"b\na\nb\n","unique":true}`, "a\nb", false},
		{"sort nothing", text, "sort_lines", `{}`, "no text given", true},
		{"bad arguments", text, "count", `{"text":3}`, "invalid arguments: json: cannot unmarshal number", true},
		{"list notes", notes, "list_notes", `{}`, "shopping", false},
		{"save", notes, "save_note", `{"title":"ideas","text":"try mini-me"}`, `saved note "ideas"`, false},
		{"save again", notes, "save_note", `{"title":"ideas","text":"x"}`, `a note titled "ideas" exists already`, true},
		{"save untitled", notes, "save_note", `{"title":" ","text":"x"}`, "a note needs a title", true},
		{"list two", notes, "list_notes", `{}`, "ideas\nshopping", false},
		{"delete", notes, "delete_note", `{"title":"shopping"}`, `deleted note "shopping"`, false},
		{"read deleted", notes, "read_note", `{"title":"shopping"}`, `no note titled "shopping"`, true},
		{"delete missing", notes, "delete_note", `{"title":"shopping"}`, `no note titled "shopping"`, true},
		{"transactions first", finance, "list_transactions", `{}`, "no profile selected", true},
		{"unknown profile", finance, "select_profile", `{"profile":"boss"}`, `unknown profile "boss": the profiles are perso, pro`, true},
		{"select", finance, "select_profile", `{"profile":"perso"}`, "selected profile perso (Personal, 7 transactions)", false},
		{"selected", finance, "list_profiles", `{}`, "perso: Personal (selected)\npro: Freelance", false},
		{"groceries", finance, "list_transactions", `{"category":"groceries"}`,
			"t1  2026-06-02  Boulangerie Martin        -4.20  groceries\nt3  2026-06-07  SuperMarché              -62.35  groceries", false},
		{"empty category", finance, "list_transactions", `{"category":"yachts"}`, `no transactions in category "yachts"`, false},
		{"recategorize", finance, "recategorize", `{"id":"t6","category":" Groceries "}`, "t6 (Fromagerie Durand): category other -> groceries", false},
		{"recategorize missing", finance, "recategorize", `{"id":"t99","category":"x"}`, `no transaction "t99" in profile perso`, true},
		{"recategorize to nothing", finance, "recategorize", `{"id":"t1","category":""}`, "the new category is empty", true},
		{"summary", finance, "spending_summary", `{}`,
			"dining          12.80\ngroceries       84.95\nhousing        850.00\ntransport       75.20\nincome        2450.00\nbalance       1427.05", false},
	} {
		// The calls of a server depend on those before them: they run in order.
		t.Run(tc.name, func(t *testing.T) {
			got, isError := callTool(t, tc.s, tc.tool, tc.args)
			assert.Equal(t, tc.isError, isError, got)
			if tc.isError {
				assert.Contains(t, got, tc.want)
			} else {
				assert.Equal(t, tc.want, got)
			}
		})
	}
}

func TestDiscover(t *testing.T) {
	servers, err := Discover(context.Background())
	require.NoError(t, err)
	cfg := servers.Config
	assert.Equal(t, "the demo's servers", cfg.File)
	require.Len(t, cfg.Servers, 2)
	for i, name := range []string{"text", "notes"} {
		s := cfg.Servers[i]
		assert.Equal(t, name, s.Name)
		assert.Regexp(t, `^http://127\.0\.0\.1:\d+/mcp$`, s.URL)
		assert.Equal(t, permission.ModeAsk, s.Permissions)
	}
	assert.Len(t, servers.Tools.Tools(), 7)
	assert.Empty(t, servers.Tools.Warnings())

	servers.Close()
	ctx := context.Background()
	_, err = servers.Tools.Call(ctx, "text_count", map[string]string{"text": "a"})
	assert.ErrorIs(t, err, mcp.ErrClosed)
	for _, s := range cfg.Servers {
		resp, err := http.Post(s.URL, "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
		}
		assert.Error(t, err, "%s still answers after Close", s.Name)
	}
}

// Discover, stopped before it is done, stops the servers it started
// (goleak would find their goroutines).
func TestDiscoverCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	servers, err := Discover(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, servers)
}
