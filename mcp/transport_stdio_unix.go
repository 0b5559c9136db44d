//go:build unix

package mcp

import (
	"io"
	"os"
	"syscall"
)

// baseEnvNames are the host variables every stdio server gets.
var baseEnvNames = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ",
	"LANG", "LC_ALL", "LC_CTYPE", "TERM",
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
}

// groupAttr returns the host's attributes (copied) with the child in a
// process group of its own, so that signals reach what it starts.
func groupAttr(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{}
	if attr != nil {
		*a = *attr
	}
	if !a.Setsid { // a new session is a new group already
		a.Setpgid, a.Pgid = true, 0
	}
	return a
}

// processGroup returns the group the child leads.
func processGroup(pid int) int { return pid }

// signalGroup sends SIGTERM (graceful) or SIGKILL to the child's group,
// and to the child itself in case it left the group.
func (p *proc) signalGroup(graceful bool) {
	sig := syscall.SIGKILL
	if graceful {
		sig = syscall.SIGTERM
	}
	if p.pgid > 0 {
		_ = syscall.Kill(-p.pgid, sig)
	}
	_ = p.cmd.Process.Signal(sig) // ErrProcessDone once reaped
}

// groupAlive reports whether any process of the child's group remains
// (zombies included: a non-reaping init keeps them).
func (p *proc) groupAlive() bool {
	return p.pgid > 0 && syscall.Kill(-p.pgid, 0) == nil
}

// rawPipes says that the stdin pipe of a process that startProc starts
// is written through rawStdin's descriptor.
const rawPipes = true

// rawStdin returns the raw descriptor of a stdin that is our own pipe, an
// *os.File, for writes that need no watcher of their context when the pipe
// has room (see proc.writeRaw); nil for anything else.
func rawStdin(w io.Writer) syscall.RawConn {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// writeFd writes b to the descriptor fd once.
func writeFd(fd uintptr, b []byte) (int, error) { return syscall.Write(int(fd), b) }
