package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// stuckClose is a stream whose Close does not unblock Read: only cut does.
type stuckClose struct{ net.Conn }

func (stuckClose) Close() error { return nil }

// A stream that breaks the contract (Close must unblock Read) makes
// Shutdown fail once its ctx ends, instead of hanging.
func TestStreamCloseContract(t *testing.T) {
	var conn net.Conn
	c, err := mcp.Connect(context.Background(), &mcp.StreamTransport{Dial: func(context.Context) (io.ReadWriteCloser, error) {
		ours, theirs := net.Pipe()
		go serveGreeter(theirs)
		conn = ours
		return stuckClose{ours}, nil
	}}, nil)
	require.NoError(t, err)
	defer conn.Close() // what frees the reader
	res, err := c.CallTool(context.Background(), "greet", map[string]string{"name": "Bo"})
	require.NoError(t, err)
	assert.Equal(t, "Hello, Bo", res.Text())
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	require.ErrorContains(t, c.Shutdown(ctx), "the stream's reader did not return after Close")
}

// cancelOnCall is the client's end of a stream whose Write of a
// tools/call returns only once after is closed (see happened), and after
// cancelling the call's context: the call then meets both at once.
type cancelOnCall struct {
	net.Conn
	cancel func()
	after  chan struct{}
	once   sync.Once
}

func newCancelOnCall(c net.Conn, cancel func()) cancelOnCall {
	return cancelOnCall{Conn: c, cancel: cancel, after: make(chan struct{})}
}

// happened says the other outcome has come.
func (s *cancelOnCall) happened() { s.once.Do(func() { close(s.after) }) }

func (s *cancelOnCall) Write(b []byte) (int, error) {
	n, err := s.Conn.Write(b)
	if err == nil && bytes.Contains(b, []byte(`"tools/call"`)) {
		<-s.after
		s.cancel()
	}
	return n, err
}

// answeredThenCancelled cancels once the reader has handed the response
// (serveGreeter's) to the call: it came back for more.
type answeredThenCancelled struct {
	cancelOnCall
	gotAnswer atomic.Bool
}

func (s *answeredThenCancelled) Read(b []byte) (int, error) {
	if s.gotAnswer.Load() {
		s.happened()
	}
	n, err := s.Conn.Read(b)
	if bytes.Contains(b[:n], []byte("Hello")) {
		s.gotAnswer.Store(true)
	}
	return n, err
}

// A call whose response came is answered, even when its context ended
// before it looked: the tool ran, and the response may name a task to
// follow (and cancel).
func TestResponseAndCancelTogether(t *testing.T) {
	raceCancel(t, serveGreeter, func(c net.Conn, cancel func()) io.ReadWriteCloser {
		return &answeredThenCancelled{cancelOnCall: newCancelOnCall(c, cancel)}
	}, func(t *testing.T, res *mcp.CallToolResult, err error) {
		require.NoError(t, err)
		assert.Equal(t, "Hello, Bo", res.Text())
	})
}

// raceCancel makes calls whose context the stream wrap makes ends as the
// call meets another outcome, each call over a new stream to serve, and
// has check judge each: which of the two the call saw first was left to
// chance, so it makes many.
func raceCancel(t *testing.T, serve func(net.Conn), wrap func(net.Conn, func()) io.ReadWriteCloser, check func(*testing.T, *mcp.CallToolResult, error)) {
	for i := range 64 {
		ctx, cancel := context.WithCancel(context.Background())
		c, err := mcp.Connect(context.Background(), &mcp.StreamTransport{Dial: func(context.Context) (io.ReadWriteCloser, error) {
			ours, theirs := net.Pipe()
			go serve(theirs)
			return wrap(ours, cancel), nil
		}}, nil)
		require.NoError(t, err)
		res, err := c.CallTool(ctx, "greet", map[string]string{"name": "Bo"})
		t.Run(fmt.Sprint(i), func(t *testing.T) { check(t, res, err) })
		require.NoError(t, c.Close())
		cancel()
	}
}

// noDeadlines hides SetWriteDeadline; writing is told of each write of a
// tools/call as it begins.
type noDeadlines struct {
	io.ReadWriteCloser
	writing chan<- string
}

func (s noDeadlines) Write(b []byte) (int, error) {
	if bytes.Contains(b, []byte(`"tools/call"`)) {
		s.writing <- string(b)
	}
	return s.ReadWriteCloser.Write(b)
}

// hangingServer answers server/discover over conn, then reads the first
// tools/call, tells hung and reads nothing more until release is closed.
func hangingServer(conn net.Conn, hung chan<- struct{}, release <-chan struct{}) {
	defer conn.Close()
	in := bufio.NewScanner(conn)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(in.Bytes(), &req)
		switch req.Method {
		case "server/discover":
			fmt.Fprintf(conn, `{"jsonrpc":"2.0","id":%s,"result":{"supportedVersions":[%q],"capabilities":{"tools":{}}}}`+"\n", req.ID, mcp.Version20260728)
		case "tools/call":
			close(hung)
			<-release
			return
		}
	}
}

// Cancelling a call blocked writing to a stream without deadlines cuts the
// stream: the other calls in flight fail with ErrStreamBroken (they may
// have run), not with the cancelled call's context error, which is not
// theirs.
func TestCutWriteFailsOthersAsBroken(t *testing.T) {
	hung, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	writing := make(chan string, 2)
	c, err := mcp.Connect(context.Background(), &mcp.StreamTransport{Dial: func(context.Context) (io.ReadWriteCloser, error) {
		ours, theirs := net.Pipe()
		go hangingServer(theirs, hung, release)
		return noDeadlines{ours, writing}, nil
	}}, nil)
	require.NoError(t, err)
	defer c.Close()
	first := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.Background(), "slow", nil)
		first <- err
	}()
	<-writing
	<-hung
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-writing; cancel() }() // once the second call's write is under way
	_, err = c.CallTool(ctx, "other", nil)
	require.ErrorIs(t, err, context.Canceled)
	err = <-first
	require.ErrorIs(t, err, mcp.ErrStreamBroken)
	assert.NotErrorIs(t, err, context.Canceled, "the first call was not cancelled")
}

// endedThenCancelled cancels once the connection has failed the calls in
// flight, the server having hung up: it closes the stream then.
type endedThenCancelled struct{ cancelOnCall }

func (s *endedThenCancelled) Close() error {
	s.happened()
	return s.Conn.Close()
}

// A call whose context ended as its stream broke returns the context's
// error, as over Streamable HTTP.
func TestStreamEndAndCancelTogether(t *testing.T) {
	hangUp := make(chan struct{})
	close(hangUp) // the server returns, closing its end, once it has the call
	raceCancel(t, func(c net.Conn) { hangingServer(c, make(chan struct{}), hangUp) }, func(c net.Conn, cancel func()) io.ReadWriteCloser {
		return &endedThenCancelled{newCancelOnCall(c, cancel)}
	}, func(t *testing.T, _ *mcp.CallToolResult, err error) {
		require.ErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, mcp.ErrStreamBroken)
	})
}
