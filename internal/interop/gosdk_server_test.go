package interop

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// gosdkServer is an MCP server built with the official Go SDK and served
// over Streamable HTTP on 127.0.0.1. It records what it sees, so tests can
// check the client's behaviour from the server's side.
type gosdkServer struct {
	url string
	// srv is the SDK's server, for tests that change what it offers.
	srv *sdk.Server
	// started receives the tag of each slow call that begins, cancelled
	// the context error of each slow call that ended by cancellation.
	started   chan string
	cancelled chan error

	mu       sync.Mutex
	requests []seenRequest
}

// seenRequest is one HTTP request the server answered.
type seenRequest struct {
	method  string // HTTP method
	session string // Mcp-Session-Id sent by the client
	issued  string // Mcp-Session-Id set by the server
	status  int
}

// gosdkServerName is the name the server reports.
const gosdkServerName = "interop-gosdk"

type addArgs struct {
	A float64 `json:"a" jsonschema:"first number"`
	B float64 `json:"b" jsonschema:"second number"`
}

type addResult struct {
	Sum float64 `json:"sum"`
}

type echoArgs struct {
	Text string `json:"text"`
}

type slowArgs struct {
	Steps   int    `json:"steps" jsonschema:"how many steps to run"`
	DelayMS int    `json:"delayMs" jsonschema:"the wait before each step, in milliseconds"`
	Tag     string `json:"tag,omitempty" jsonschema:"a name for the call, for tests to wait on"`
}

// startGoSDK starts a server with the given handler options; it stops when
// the test ends.
func startGoSDK(t *testing.T, opts *sdk.StreamableHTTPOptions) *gosdkServer {
	t.Helper()
	g := &gosdkServer{started: make(chan string, 16), cancelled: make(chan error, 16)}
	s := sdk.NewServer(&sdk.Implementation{Name: gosdkServerName, Version: "1.0.0"}, nil)

	sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "Adds two numbers."},
		func(_ context.Context, _ *sdk.CallToolRequest, in addArgs) (*sdk.CallToolResult, addResult, error) {
			return nil, addResult{Sum: in.A + in.B}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Returns its text.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Always fails."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return nil, nil, errors.New("no such account")
		})
	sdk.AddTool(s, &sdk.Tool{Name: "slow", Description: "Runs steps, reporting progress, until done or cancelled."}, g.slow)

	s.AddPrompt(&sdk.Prompt{Name: "greet", Arguments: []*sdk.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
				{Role: "user", Content: &sdk.TextContent{Text: "Say hi to " + req.Params.Arguments["name"]}},
			}}, nil
		})
	s.AddResource(&sdk.Resource{URI: "mem://interop/readme", Name: "readme", MIMEType: "text/plain"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{
				{URI: req.Params.URI, MIMEType: "text/plain", Text: "hello from the go-sdk"},
			}}, nil
		})

	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, opts)
	hs := httptest.NewServer(g.record(h))
	t.Cleanup(hs.Close)
	g.url, g.srv = hs.URL, s
	return g
}

// slow reports one progress step every DelayMS until Steps are done or the
// call is cancelled.
func (g *gosdkServer) slow(ctx context.Context, req *sdk.CallToolRequest, in slowArgs) (*sdk.CallToolResult, any, error) {
	signal(g.started, in.Tag)
	token := req.Params.GetProgressToken()
	for i := 1; i <= in.Steps; i++ {
		select {
		case <-ctx.Done():
			signal(g.cancelled, ctx.Err())
			return nil, nil, ctx.Err()
		case <-time.After(time.Duration(in.DelayMS) * time.Millisecond):
		}
		if token != nil {
			// The error is not ours to judge: JSON responses cannot carry
			// notifications.
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: float64(in.Steps)})
		}
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("done after %d steps", in.Steps)}}}, nil, nil
}

// signal sends v unless the buffer is full: a handler never blocks on a
// test that stopped listening.
func signal[T any](c chan<- T, v T) {
	select {
	case c <- v:
	default:
	}
}

// waitStarted returns a func that returns once a slow call tagged tag runs.
func (g *gosdkServer) waitStarted(tag string) func(context.Context) error {
	return func(ctx context.Context) error {
		for {
			select {
			case got := <-g.started:
				if got == tag {
					return nil
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// waitCancelled returns once a slow call ended by cancellation.
func (g *gosdkServer) waitCancelled(ctx context.Context) error {
	select {
	case err := <-g.cancelled:
		if !errors.Is(err, context.Canceled) {
			return fmt.Errorf("slow call ended with %v, want context.Canceled", err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// seen returns the requests answered so far.
func (g *gosdkServer) seen() []seenRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]seenRequest(nil), g.requests...)
}

// record wraps h to log each request once it is answered.
func (g *gosdkServer) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rw, r)
		g.mu.Lock()
		defer g.mu.Unlock()
		g.requests = append(g.requests, seenRequest{
			method:  r.Method,
			session: r.Header.Get("Mcp-Session-Id"),
			issued:  w.Header().Get("Mcp-Session-Id"),
			status:  rw.status,
		})
	})
}

// statusWriter remembers the status code; it keeps streaming working by
// passing Flush on.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
