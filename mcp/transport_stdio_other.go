//go:build !unix

package mcp

import (
	"io"
	"syscall"
)

// baseEnvNames are the host variables every stdio server gets; Windows
// programs need most of these to start at all.
var baseEnvNames = []string{
	"PATH", "PATHEXT", "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC",
	"TEMP", "TMP", "USERPROFILE", "USERNAME", "HOMEDRIVE", "HOMEPATH",
	"APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "PROGRAMFILES", "HOME", "TZ", "LANG",
}

// groupAttr copies the host's attributes: there are no process groups to
// join here.
func groupAttr(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	if attr == nil {
		return nil
	}
	a := *attr
	return &a
}

// processGroup returns 0: no group to signal.
func processGroup(int) int { return 0 }

// signalGroup kills the child: without signals, there is no graceful
// step (best effort; its own children are not reached).
func (p *proc) signalGroup(bool) { _ = p.cmd.Process.Kill() }

// groupAlive reports false: only the child itself is tracked.
func (p *proc) groupAlive() bool { return false }

// rawPipes says that stdin pipes are written through their Write.
const rawPipes = false

// rawStdin returns nil: writes to stdin go through its Write, watched by
// their context.
func rawStdin(io.Writer) syscall.RawConn { return nil }

// writeFd is not called: rawStdin gives no descriptor.
func writeFd(uintptr, []byte) (int, error) { return 0, syscall.EINVAL }
