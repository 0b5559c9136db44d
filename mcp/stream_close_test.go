package mcp_test

import (
	"bytes"
	"context"
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
