//go:build linux

package mcp

import (
	"os"
	"syscall"
	"unsafe"
)

// watchExit asks, in attr, for a pidfd of the child, so that the wait for
// its exit parks in the netpoller instead of holding a thread in waitid
// (exitFile, awaitExit). It returns where the pidfd will be, or nil when
// the host's attributes ask for one already (theirs is left alone).
func watchExit(attr *syscall.SysProcAttr) *int {
	if attr == nil || attr.PidFD != nil {
		return nil
	}
	fd := -1
	attr.PidFD = &fd
	return &fd
}

// exitFile wraps the pidfd that a start left in fd, made non-blocking so
// that the poller takes it; nil when there is none.
func exitFile(fd *int) *os.File {
	if fd == nil || *fd < 0 {
		return nil
	}
	if err := syscall.SetNonblock(*fd, true); err != nil {
		_ = syscall.Close(*fd)
		return nil
	}
	return os.NewFile(uintptr(*fd), "pidfd")
}

// awaitExit returns once the process of the pidfd f has exited, not yet
// reaped, parked until the pidfd becomes readable; at once when f is nil
// or cannot be polled (cmd.Wait then blocks in waitid, as without it).
func awaitExit(f *os.File) {
	if f == nil {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Read(exited)
}

// siPid is the offset of si_pid in siginfo_t: after three ints, aligned
// for the union's pointers.
const siPid = 12 + 4*(unsafe.Sizeof(uintptr(0))/8)

// exited reports whether the process of the pidfd fd has exited, leaving
// it to be reaped (waitid with WNOHANG and WNOWAIT). An error, a kernel
// without waitid on pidfds among them, counts as exited: cmd.Wait decides.
func exited(fd uintptr) bool {
	const pPIDFD = 3   // idtype P_PIDFD
	var info [128]byte // siginfo_t
	_, _, e := syscall.Syscall6(syscall.SYS_WAITID, pPIDFD, fd, uintptr(unsafe.Pointer(&info[0])),
		syscall.WEXITED|syscall.WNOHANG|syscall.WNOWAIT, 0, 0)
	return e != 0 || *(*int32)(unsafe.Pointer(&info[siPid])) != 0
}
