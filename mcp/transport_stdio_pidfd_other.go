//go:build !linux

package mcp

import (
	"os"
	"syscall"
)

// watchExit returns nil: without pidfds, cmd.Wait waits for the exit.
func watchExit(*syscall.SysProcAttr) *int { return nil }

// exitFile returns nil: there is no pidfd.
func exitFile(*int) *os.File { return nil }

// awaitExit returns at once: cmd.Wait waits for the exit.
func awaitExit(*os.File) {}
