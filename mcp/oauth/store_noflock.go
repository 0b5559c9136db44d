//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package oauth

import (
	"context"
	"os"
)

// lockFile opens the lock file at path. This platform has no flock: the
// FileStore's own lock holds off this process's FileStores only.
func lockFile(_ context.Context, path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}
