package config_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
)

func TestRoots(t *testing.T) {
	cfg, err := config.Parse([]byte(`mcp:
  roots: [/home/me/site, "file:///home/me/My%20Notes", "file://localhost/srv/../srv/data"]
  servers:
    - name: global
      command: x
    - name: own
      command: x
      roots: [/tmp/only]
    - name: none
      command: x
      roots: []
`))
	require.NoError(t, err)
	want := []string{"file:///home/me/site", "file:///home/me/My%20Notes", "file:///srv/data"}
	assert.Equal(t, want, cfg.Roots)
	assert.Equal(t, want, cfg.Servers[0].Roots, "the global roots when the server sets none")
	assert.Equal(t, []string{"file:///tmp/only"}, cfg.Servers[1].Roots)
	assert.NotNil(t, cfg.Servers[2].Roots)
	assert.Empty(t, cfg.Servers[2].Roots, "roots: [] gives the server none")

	cfg, err = config.Parse([]byte("mcp:\n  servers:\n    - name: a\n      command: x\n"))
	require.NoError(t, err)
	assert.Nil(t, cfg.Servers[0].Roots, "nothing configured: left to the host")
}
