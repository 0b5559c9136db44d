package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"

	mm "git.rickub.com/bots-garden/mini-me/mcp"
	mcpgo "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgotypes "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// session is one connected client, as the phases use it.
type session interface {
	list(ctx context.Context) (int, error) // every tool, all pages
	echo(ctx context.Context) error        // echo "hello"
	big(ctx context.Context) error         // the 1 MiB result
	// huge calls the 16 MiB tool and calls held while the result is
	// still reachable, as a caller holding it would.
	huge(ctx context.Context, held func()) error
	close() error
}

// target is what a client connects to: an HTTP URL or (url "") the stdio
// replay server.
type target struct {
	url    string
	modern bool
}

// contender is one client implementation.
type contender struct {
	name    string
	connect func(ctx context.Context, t target, hc *http.Client) (session, error)
}

var contenders = []contender{
	{"floor", connectFloor},
	{"mini-me", connectMiniMe},
	{"go-sdk", connectGoSDK},
	{"mcp-go", connectMCPGo},
}

// stdioCommand starts the stdio replay server.
func stdioCommand() (string, []string) {
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	return self, []string{"-serve", "stdio"}
}

// checkText checks that a result is one text block of want bytes, so that
// no client is measured doing less than reading it: blocks is how many
// content blocks it has, textLen the length of the first one's text,
// isText whether that one is text.
func checkText(blocks, textLen int, isText bool, want int) error {
	switch {
	case blocks != 1:
		return fmt.Errorf("%d content blocks", blocks)
	case !isText:
		return errors.New("content is not text")
	case textLen != want:
		return fmt.Errorf("result text of %d bytes, want %d", textLen, want)
	}
	return nil
}

const echoLen = len("echo: hello")

// checkHeld is checkText, then it calls held, if not nil, while res (the
// result) is still reachable.
func checkHeld(held func(), res any, blocks, textLen int, isText bool, want int) error {
	err := checkText(blocks, textLen, isText, want)
	if held != nil {
		held()
	}
	runtime.KeepAlive(res)
	return err
}

// --- mini-me

type miniMe struct{ c *mm.Client }

func connectMiniMe(ctx context.Context, t target, hc *http.Client) (session, error) {
	var tr mm.Transport = &mm.HTTPTransport{URL: t.url, HTTPClient: hc}
	if t.url == "" {
		cmd, args := stdioCommand()
		tr = &mm.CommandTransport{Command: cmd, Args: args}
	}
	c, err := mm.Connect(ctx, tr, nil)
	if err != nil {
		return nil, err
	}
	return miniMe{c}, nil
}

func (m miniMe) list(ctx context.Context) (int, error) {
	tools, err := m.c.ListTools(ctx)
	return len(tools), err
}

func (m miniMe) call(ctx context.Context, name string, want int, held func()) error {
	res, err := m.c.CallTool(ctx, name, echoArgs)
	if err != nil || len(res.Content) == 0 {
		return cmp.Or(err, checkText(0, 0, false, want))
	}
	return checkHeld(held, res, len(res.Content), len(res.Content[0].Text), res.Content[0].Type == "text", want)
}

var echoArgs = map[string]any{"text": "hello"}

func (m miniMe) echo(ctx context.Context) error { return m.call(ctx, "echo", echoLen, nil) }
func (m miniMe) big(ctx context.Context) error  { return m.call(ctx, "big", bigSize, nil) }
func (m miniMe) huge(ctx context.Context, held func()) error {
	return m.call(ctx, "huge", hugeSize, held)
}
func (m miniMe) close() error { return m.c.Close() }

// --- the official go-sdk

type goSDK struct{ s *sdk.ClientSession }

func connectGoSDK(ctx context.Context, t target, hc *http.Client) (session, error) {
	c := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	var tr sdk.Transport = &sdk.StreamableClientTransport{Endpoint: t.url, HTTPClient: hc, DisableStandaloneSSE: true}
	if t.url == "" {
		cmd, args := stdioCommand()
		tr = &sdk.CommandTransport{Command: exec.Command(cmd, args...)}
	}
	s, err := c.Connect(ctx, tr, nil)
	if err != nil {
		return nil, err
	}
	return goSDK{s}, nil
}

func (g goSDK) list(ctx context.Context) (int, error) {
	n := 0
	for _, err := range g.s.Tools(ctx, nil) {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func (g goSDK) call(ctx context.Context, name string, want int, held func()) error {
	res, err := g.s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: echoArgs})
	if err != nil || len(res.Content) == 0 {
		return cmp.Or(err, checkText(0, 0, false, want))
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		tc = &sdk.TextContent{}
	}
	return checkHeld(held, res, len(res.Content), len(tc.Text), ok, want)
}

func (g goSDK) echo(ctx context.Context) error { return g.call(ctx, "echo", echoLen, nil) }
func (g goSDK) big(ctx context.Context) error  { return g.call(ctx, "big", bigSize, nil) }
func (g goSDK) huge(ctx context.Context, held func()) error {
	return g.call(ctx, "huge", hugeSize, held)
}
func (g goSDK) close() error { return g.s.Close() }

// --- mcp-go

type mcpGo struct{ c *mcpgo.Client }

func connectMCPGo(ctx context.Context, t target, hc *http.Client) (session, error) {
	var c *mcpgo.Client
	var err error
	if t.url == "" {
		cmd, args := stdioCommand()
		c, err = mcpgo.NewStdioMCPClient(cmd, nil, args...)
	} else {
		c, err = mcpgo.NewStreamableHttpClient(t.url, mcpgotransport.WithHTTPBasicClient(hc))
	}
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	var req mcpgotypes.InitializeRequest
	req.Params.ClientInfo = mcpgotypes.Implementation{Name: "bench", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		_ = c.Close()
		return nil, err
	}
	return mcpGo{c}, nil
}

func (m mcpGo) list(ctx context.Context) (int, error) {
	res, err := m.c.ListTools(ctx, mcpgotypes.ListToolsRequest{})
	if err != nil {
		return 0, err
	}
	return len(res.Tools), nil
}

func (m mcpGo) call(ctx context.Context, name string, want int, held func()) error {
	var req mcpgotypes.CallToolRequest
	req.Params.Name, req.Params.Arguments = name, echoArgs
	res, err := m.c.CallTool(ctx, req)
	if err != nil || len(res.Content) == 0 {
		return cmp.Or(err, checkText(0, 0, false, want))
	}
	tc, ok := res.Content[0].(mcpgotypes.TextContent)
	return checkHeld(held, res, len(res.Content), len(tc.Text), ok, want)
}

func (m mcpGo) echo(ctx context.Context) error { return m.call(ctx, "echo", echoLen, nil) }
func (m mcpGo) big(ctx context.Context) error  { return m.call(ctx, "big", bigSize, nil) }
func (m mcpGo) huge(ctx context.Context, held func()) error {
	return m.call(ctx, "huge", hugeSize, held)
}
func (m mcpGo) close() error { return m.c.Close() }
