//go:build unix

package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// secretTools are the tools of the servers of TestSecretsNeverEmitted:
// each but "ok" is answered by a fault that echoes the credential the
// request carried.
var secretTools = []string{"ok", "html500", "rpcerror", "challenge", "plaintext", "redirect"}

// echoCredential is a Fault for secretTools: the answer quotes the value
// of the header the credential travels in, as careless servers and
// proxies do.
func echoCredential(header, redirect string) mcptest.DoFunc {
	return func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message, run func() []byte) {
		var p struct{ Name string }
		_ = json.Unmarshal(msg.Params, &p)
		cred := r.Header.Get(header)
		switch p.Name {
		case "html500":
			mcptest.HTMLStatus(500, "", header)(w, r, msg, run)
		case "rpcerror":
			w.Header().Set("Content-Type", "application/json")
			data, _ := json.Marshal(map[string]string{"credential": cred})
			_ = json.NewEncoder(w).Encode(jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: msg.ID,
				Error: &jsonrpc.Error{Code: -32000, Message: "credential " + cred + " lacks scope", Data: data}})
		case "challenge":
			mcptest.Challenge(401, fmt.Sprintf(`Bearer error="invalid_token", error_description="token %s expired"`, strings.TrimPrefix(cred, "Bearer ")))(w, r, msg, run)
		case "plaintext":
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintf(w, "upstream refused %s: %s", header, cred)
		case "redirect":
			mcptest.Redirect(http.StatusTemporaryRedirect, redirect)(w, r, msg, run)
		}
	}
}

// TestSecretsNeverEmitted runs a session with faults over a Toolset of a
// bearer server (modern, SSE), an API-key server (legacy, its session
// lost once) and a stdio server given the token on purpose, and collects
// everything the SDK emits: errors (as %v, %+v and %#v), slog records at
// debug, OnChange, OnProgress and OnLog events, warnings, server statuses,
// and %v of the configuration, the transports, the Toolset and a Client.
// The token appears in none of it. The stdio child, checked from inside,
// has only its configured variables and the minimal base: a sentinel in
// the host's environment does not reach it.
func TestSecretsNeverEmitted(t *testing.T) {
	const token = "sk-live-5ecret-7788"
	const sentinel = "host-only-sentinel-9911"
	t.Setenv("MATRIX_SECRET", token)
	t.Setenv("MATRIX_HOST_SENTINEL", sentinel)
	bin := mcptest.BuildFinance(t)

	var emitted []string
	var mu sync.Mutex
	emit := func(format string, args ...any) {
		mu.Lock()
		emitted = append(emitted, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	elsewhere := &mcptest.Server{Versions: both, Fault: &mcptest.Fault{Do: echoCredential("Authorization", "")}}
	other := strings.Replace(mcptest.Start(t, elsewhere), "127.0.0.1", "localhost", 1)
	var tools []mcptest.Tool
	for _, name := range secretTools {
		tools = append(tools, mcptest.PlainTool(name))
	}
	faulty := func(m *jsonrpc.Message) bool {
		var p struct{ Name string }
		_ = json.Unmarshal(m.Params, &p)
		return m.Method == "tools/call" && p.Name != "ok"
	}
	bearer := &mcptest.Server{Versions: modern, SSE: true, Tools: tools}
	bearer.Fault = &mcptest.Fault{Match: faulty, Do: echoCredential("Authorization", other)}
	apiKey := &mcptest.Server{Versions: legacy, Tools: tools}
	apiKey.Fault = &mcptest.Fault{Match: faulty, Do: echoCredential("X-Api-Key", other)}
	servers := []config.Server{
		{Name: "bearer", URL: mcptest.Start(t, bearer), Auth: &config.Auth{Type: config.AuthBearer, TokenEnv: "MATRIX_SECRET"}},
		{Name: "apikey", URL: mcptest.Start(t, apiKey), Auth: &config.Auth{Type: config.AuthAPIKey, TokenEnv: "MATRIX_SECRET", Header: "X-Api-Key"}},
		{Name: "local", Command: bin, Args: []string{"-era", "legacy", "-list-log-burst"}, Env: map[string]string{"FINANCE_TOKEN": "${MATRIX_SECRET}"}},
	}

	logs := &logRecorder{}
	opts := &toolset.Options{
		Client: mcp.Options{
			Logger:     slog.New(logs),
			OnProgress: func(p mcp.Progress) { emit("%+v", p) },
			OnLog:      func(m mcp.LogMessage) { emit("%+v %s", m, m.Data) },
		},
		OnChange: func(c toolset.ToolsChange) { emit("%+v %#v", c, c) },
	}
	ts, err := toolset.Discover(context.Background(), servers, opts)
	require.NoError(t, err)
	for _, s := range ts.Servers() {
		require.True(t, s.Connected, "%s: %v", s.Name, s.Err)
	}

	ctx := context.Background()
	call := func(name string, args any) {
		res, err := ts.Call(ctx, name, args)
		if err != nil {
			emit("%v | %+v | %#v", err, err, err)
			// What a host reads after errors.As: every field of every
			// error in the chain (the parsed challenges of an auth error).
			for _, e := range errorChain(err) {
				if v := reflect.ValueOf(e); v.Kind() == reflect.Pointer && !v.IsNil() {
					emit("%+v", v.Elem().Interface())
				}
			}
			return
		}
		emit("%+v %s", res, res.Text())
	}
	for _, srv := range []string{"bearer", "apikey"} {
		for _, tool := range secretTools {
			call(srv+"_"+tool, nil)
		}
	}
	apiKey.ExpireSessions() // a new session, a replay, debug logs
	call("apikey_ok", nil)
	call("local_log_burst", map[string]int{"n": 5})

	// The child's whole environment, from inside.
	res, err := ts.Call(ctx, "local_env", nil)
	require.NoError(t, err)
	var env map[string]*string
	require.NoError(t, json.Unmarshal([]byte(res.Text()), &env))
	require.NotNil(t, env["FINANCE_TOKEN"], "the configured variable")
	assert.True(t, *env["FINANCE_TOKEN"] == token, "configured from the host")
	for name, v := range env {
		assert.NotEqual(t, sentinel, *v, "the host's sentinel reached the child as %s", name)
		if name != "FINANCE_TOKEN" {
			assert.Contains(t, minimalBase, name, "a variable beyond the configuration and the minimal base")
			assert.Equal(t, os.Getenv(name), *v, name)
		}
	}
	assert.NotContains(t, env, "MATRIX_HOST_SENTINEL")
	assert.NotContains(t, env, "MATRIX_SECRET")

	// What a host prints of its configuration and connections.
	emit("%v | %+v | %#v", servers, servers, servers)
	for _, w := range ts.Warnings() {
		emit("%v %+v", w, w)
	}
	for _, s := range ts.Servers() {
		emit("%v %+v", s, s)
	}
	for _, tr := range []mcp.Transport{
		&mcp.HTTPTransport{URL: servers[0].URL, TokenEnv: "MATRIX_SECRET"},
		&mcp.HTTPTransport{URL: servers[1].URL, TokenEnv: "MATRIX_SECRET", TokenHeader: "X-Api-Key"},
		&mcp.CommandTransport{Command: bin, Env: servers[2].Env},
	} {
		emit("%v | %+v | %#v", tr, tr, tr)
		c, err := mcp.Connect(ctx, tr, &mcp.Options{Logger: slog.New(logs)})
		require.NoError(t, err)
		require.NoError(t, c.Close())
		emit("%v | %+v", c, c) // closed: nothing changes it while fmt reads
	}
	require.NoError(t, ts.Shutdown(ctx))
	emit("%v %+v", ts, ts)

	logs.mu.Lock()
	for _, r := range logs.records {
		emit("%s %v %v", r.level, r.msg, r.attrs)
	}
	logs.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	require.Greater(t, len(emitted), 30, "the session emitted what it should")
	redacted := 0
	for _, s := range emitted {
		assert.NotContains(t, s, token)
		redacted += strings.Count(s, "[redacted]")
	}
	t.Logf("%d things emitted, %d redactions", len(emitted), redacted)
	assert.Positive(t, redacted, "the echoed token was seen and redacted")
	// The faults did reach the client with the token in them.
	var echoed int
	for _, srv := range []*mcptest.Server{bearer, apiKey, elsewhere} {
		echoed += srv.FaultHits()
	}
	assert.GreaterOrEqual(t, echoed, 10)
}

// errorChain lists err and every error it wraps, depth first.
func errorChain(err error) []error {
	if err == nil {
		return nil
	}
	out := []error{err}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		out = append(out, errorChain(u.Unwrap())...)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, errorChain(e)...)
		}
	}
	return out
}

// minimalBase is the host environment every stdio server gets
// (baseEnvNames in transport_stdio_unix.go, as documented).
var minimalBase = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ",
	"LANG", "LC_ALL", "LC_CTYPE", "TERM",
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
}
