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

// answeredThenCancelled is the client's end of a stream to serveGreeter
// whose Write of a tools/call returns only once the reader has handed the
// response to the call, and after cancelling the call's context: the call
// then finds both its response and its context's end.
type answeredThenCancelled struct {
	net.Conn
	cancel     func()
	answered   chan struct{} // the reader came back after the response
	gotAnswer  atomic.Bool
	signalOnce sync.Once
}

func (s *answeredThenCancelled) Read(b []byte) (int, error) {
	if s.gotAnswer.Load() {
		s.signalOnce.Do(func() { close(s.answered) })
	}
	n, err := s.Conn.Read(b)
	if bytes.Contains(b[:n], []byte("Hello")) {
		s.gotAnswer.Store(true)
	}
	return n, err
}

func (s *answeredThenCancelled) Write(b []byte) (int, error) {
	n, err := s.Conn.Write(b)
	if err == nil && bytes.Contains(b, []byte(`"tools/call"`)) {
		<-s.answered
		s.cancel()
	}
	return n, err
}

// A call whose response came is answered, even when its context ended
// before it looked: the tool ran, and the response may name a task to
// follow (and cancel). Which of the two the call saw first was left to
// chance, so the test makes many calls.
func TestResponseAndCancelTogether(t *testing.T) {
	for i := range 64 {
		ctx, cancel := context.WithCancel(context.Background())
		s := &answeredThenCancelled{cancel: cancel, answered: make(chan struct{})}
		c, err := mcp.Connect(context.Background(), &mcp.StreamTransport{Dial: func(context.Context) (io.ReadWriteCloser, error) {
			ours, theirs := net.Pipe()
			go serveGreeter(theirs)
			s.Conn = ours
			return s, nil
		}}, nil)
		require.NoError(t, err)
		res, err := c.CallTool(ctx, "greet", map[string]string{"name": "Bo"})
		require.NoError(t, err, "call %d", i)
		assert.Equal(t, "Hello, Bo", res.Text())
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

// endedThenCancelled is the client's end of a stream whose server hangs
// up on the first tools/call: its Write of that call returns only once
// the connection has failed the calls in flight (it closes the stream
// then), and after cancelling the call's context.
type endedThenCancelled struct {
	net.Conn
	cancel func()
	closed chan struct{}
	once   sync.Once
}

func (s *endedThenCancelled) Close() error {
	s.once.Do(func() { close(s.closed) })
	return s.Conn.Close()
}

func (s *endedThenCancelled) Write(b []byte) (int, error) {
	n, err := s.Conn.Write(b)
	if err == nil && bytes.Contains(b, []byte(`"tools/call"`)) {
		<-s.closed
		s.cancel()
	}
	return n, err
}

// A call whose context ended as its stream broke returns the context's
// error, as over Streamable HTTP: which of the two the call saw first was
// left to chance, so the test makes many calls.
func TestStreamEndAndCancelTogether(t *testing.T) {
	hangUp := make(chan struct{})
	close(hangUp) // the server returns, closing its end, once it has the call
	for i := range 64 {
		ctx, cancel := context.WithCancel(context.Background())
		s := &endedThenCancelled{cancel: cancel, closed: make(chan struct{})}
		c, err := mcp.Connect(context.Background(), &mcp.StreamTransport{Dial: func(context.Context) (io.ReadWriteCloser, error) {
			ours, theirs := net.Pipe()
			go hangingServer(theirs, make(chan struct{}), hangUp)
			s.Conn = ours
			return s, nil
		}}, nil)
		require.NoError(t, err)
		_, err = c.CallTool(ctx, "greet", nil)
		require.ErrorIs(t, err, context.Canceled, "call %d", i)
		assert.NotErrorIs(t, err, mcp.ErrStreamBroken)
		require.NoError(t, c.Close())
		cancel()
	}
}
