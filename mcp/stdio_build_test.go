package mcp_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildFinance builds internal/mcptest/finance, the stdio test server,
// into a directory of t's, with the go command found in PATH.
func buildFinance(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "finance")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	out, err := exec.Command("go", "build", "-o", bin, "git.rickub.com/bots-garden/mini-me/internal/mcptest/finance").CombinedOutput()
	require.NoError(t, err, "building the finance server: %s", out)
	return bin
}
