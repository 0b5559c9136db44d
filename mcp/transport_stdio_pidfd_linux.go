//go:build linux

package mcp

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// exitFile opens a pidfd of the child pid of its own (pidfd_open), made
// non-blocking so that the poller takes it: the wait for the exit then
// parks in the netpoller instead of holding a thread in waitid
// (awaitExit). nil when the kernel has none (cmd.Wait then waits alone).
// It is not the pidfd that a start can leave in SysProcAttr.PidFD: Go 1.23
// takes that one over and closes it once the process is reaped, and
// making it non-blocking would make os/exec's own waitid non-blocking too.
// The child cannot be reaped before cmd.Wait, so pid is still its own;
// the kernel sets close-on-exec.
func exitFile(pid int) *os.File {
	fd, _, e := syscall.Syscall(pidfdOpenTrap(), uintptr(pid), 0, 0)
	if e != 0 {
		return nil
	}
	if err := syscall.SetNonblock(int(fd), true); err != nil {
		_ = syscall.Close(int(fd))
		return nil
	}
	return os.NewFile(fd, "pidfd")
}

// pidfdOpenTrap is pidfd_open's number: 434, offset on MIPS.
func pidfdOpenTrap() uintptr {
	switch runtime.GOARCH {
	case "mips", "mipsle":
		return 4434
	case "mips64", "mips64le":
		return 5434
	}
	return 434
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
