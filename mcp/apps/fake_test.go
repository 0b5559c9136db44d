package apps_test

import (
	"context"
	"encoding/json"
	"sync"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// fakeServer is an apps.Server in memory: it lists tools and resources,
// and records what it was asked.
type fakeServer struct {
	tools     []mcp.Tool
	resources []mcp.Resource
	// read answers resources/read; nil answers not found.
	read func(uri string) (*mcp.ReadResourceResult, error)
	// call answers tools/call; nil echoes the arguments as text.
	call func(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error)

	mu    sync.Mutex
	calls []string // tool names called
	reads []string // URIs read
	lists int      // ListTools calls
}

func (f *fakeServer) ListTools(context.Context) ([]mcp.Tool, error) {
	f.mu.Lock()
	f.lists++
	f.mu.Unlock()
	return f.tools, nil
}

func (f *fakeServer) CallTool(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	f.mu.Lock()
	f.calls = append(f.calls, name)
	f.mu.Unlock()
	raw, _ := args.(json.RawMessage)
	if f.call != nil {
		return f.call(ctx, name, raw)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: name + " " + string(raw)}}}, nil
}

func (f *fakeServer) ListResources(context.Context) ([]mcp.Resource, error) { return f.resources, nil }

func (f *fakeServer) ReadResource(_ context.Context, uri string) (*mcp.ReadResourceResult, error) {
	f.mu.Lock()
	f.reads = append(f.reads, uri)
	f.mu.Unlock()
	if f.read == nil {
		return nil, &mcp.RPCError{Code: -32002, Message: "resource not found"}
	}
	return f.read(uri)
}

func (f *fakeServer) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeServer) readCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reads)
}
