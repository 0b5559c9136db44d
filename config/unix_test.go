package config_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
)

func TestUnixSocketURL(t *testing.T) {
	for _, u := range []string{"unix:///run/app.sock", "unix:///run/app.sock:/mcp"} {
		c, err := config.Parse([]byte(lines("mcp:", "  servers:", "    - name: a", "      url: "+u)))
		require.NoError(t, err, u)
		assert.Equal(t, u, c.Servers[0].URL)
	}
	for _, u := range []string{"unix://host/app.sock", "unix:app.sock"} {
		_, err := config.Parse([]byte(lines("mcp:", "  servers:", "    - name: a", "      url: "+u)))
		require.ErrorContains(t, err, "mcp.servers[0].url: a unix socket URL is unix:///absolute/path.sock", u)
	}
}
