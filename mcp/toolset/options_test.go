package toolset_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// A callback of the client template that the Toolset sets itself is
// refused with a clear error, instead of being silently replaced.
func TestDiscoverRefusesTheToolsetsOwnCallbacks(t *testing.T) {
	for name, o := range map[string]mcp.Options{
		"OnToolsChanged":     {OnToolsChanged: func() {}},
		"OnPromptsChanged":   {OnPromptsChanged: func() {}},
		"OnResourcesChanged": {OnResourcesChanged: func() {}},
		"OnResourceUpdated":  {OnResourceUpdated: func(mcp.ResourceUpdate) {}},
		"OnInvalidTool":      {OnInvalidTool: func(string, error) {}},
	} {
		t.Run(name, func(t *testing.T) {
			ts, err := toolset.Discover(context.Background(), nil, &toolset.Options{Client: o})
			require.ErrorIs(t, err, toolset.ErrOptions)
			assert.Nil(t, ts)
			assert.Contains(t, err.Error(), "Client."+name)
		})
	}
}

// Options.Logger receives the Toolset's own diagnostics: a server that
// fails is logged at Warn, without mcp.Options.
func TestDiscoverLogsToOptionsLogger(t *testing.T) {
	var out lockedBuffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	ts, err := toolset.Discover(context.Background(), []config.Server{{Name: "bad"}}, &toolset.Options{Logger: log})
	require.NoError(t, err)
	ts.Close()
	assert.Contains(t, out.String(), "server skipped")
	assert.Contains(t, out.String(), "server=bad")
}

// lockedBuffer is a bytes.Buffer for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
