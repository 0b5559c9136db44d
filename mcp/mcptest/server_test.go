package mcptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/mcptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func echo(_ context.Context, args json.RawMessage) (string, error) { return string(args), nil }

func TestServerCallsTools(t *testing.T) {
	srv, err := mcptest.NewServer(
		mcptest.Tool{Name: "echo", Description: "Says it back", Handler: echo},
		mcptest.Tool{Name: "broken", Handler: func(context.Context, json.RawMessage) (string, error) {
			return "", errors.New("disk full")
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := mcp.Connect(ctx, &mcp.HTTPTransport{URL: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 2 || tools[0].Name != "echo" || tools[0].Description != "Says it back" || tools[1].Name != "broken" {
		t.Fatalf("tools: %+v", tools)
	}
	res, err := c.CallTool(ctx, "echo", map[string]any{"x": 1})
	if err != nil || res.IsError || res.Text() != `{"x":1}` {
		t.Fatalf("echo: %+v, %v", res, err)
	}
	res, err = c.CallTool(ctx, "broken", nil)
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "disk full") {
		t.Fatalf("broken: %+v, %v", res, err)
	}
	calls := srv.Calls()
	if len(calls) != 2 || calls[0].Tool != "echo" || string(calls[0].Arguments) != `{"x":1}` || calls[1].Tool != "broken" {
		t.Errorf("calls: %+v", calls)
	}
}

func TestNewServerRejectsBadTools(t *testing.T) {
	for name, tools := range map[string][]mcptest.Tool{
		"no name":      {{Handler: echo}},
		"no handler":   {{Name: "a"}},
		"duplicate":    {{Name: "a", Handler: echo}, {Name: "a", Handler: echo}},
		"array schema": {{Name: "a", Handler: echo, InputSchema: json.RawMessage(`[]`)}},
		"bad JSON":     {{Name: "a", Handler: echo, InputSchema: json.RawMessage(`{`)}},
	} {
		t.Run(name, func(t *testing.T) {
			srv, err := mcptest.NewServer(tools...)
			if err == nil {
				srv.Close()
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), "mcptest: tool ") {
				t.Errorf("error: %v", err)
			}
		})
	}
}
