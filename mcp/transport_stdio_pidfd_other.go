//go:build !linux

package mcp

import "os"

// exitFile returns nil: without pidfds, cmd.Wait waits for the exit.
func exitFile(int) *os.File { return nil }

// awaitExit returns at once: cmd.Wait waits for the exit.
func awaitExit(*os.File) {}
