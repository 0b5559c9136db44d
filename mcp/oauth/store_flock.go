//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package oauth

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// lockFile opens (creating it, mode 0600) and flocks the file at path,
// polling until the lock is free or ctx ends. Closing the file releases
// the lock, as does the process's exit.
func lockFile(ctx context.Context, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	wait := 5 * time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			_ = f.Close()
			return nil, ctx.Err()
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}
