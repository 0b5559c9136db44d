package mcp_test

import (
	"context"
	"io"
	"net"
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
