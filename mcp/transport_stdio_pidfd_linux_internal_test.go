//go:build linux

package mcp

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// The descriptor that the exit wait parks on is its own: reaping the
// process (cmd.Wait) leaves it open, to be closed once, by the waiter. On
// Go 1.23 os/exec takes over a pidfd asked for in SysProcAttr and closes
// it after the wait, so closing it again would close whatever descriptor
// reused the number.
func TestExitWaitOwnsItsPidfd(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 3")
	cmd.SysProcAttr = groupAttr(nil)
	require.NoError(t, cmd.Start())
	f := exitFile(cmd.Process.Pid)
	require.NotNil(t, f, "no pidfd on this kernel")
	awaitExit(f)
	require.Error(t, cmd.Wait(), "exit status 3")
	require.Equal(t, 3, cmd.ProcessState.ExitCode())
	require.NoError(t, f.Close(), "the pidfd was closed by the wait already")
}
