// Command devserver runs a Temporal server on 127.0.0.1 for the tests and
// the example of agent/temporal: go.temporal.io/server's temporaltest, in
// a process (and a module) of its own, since the server and the newest
// SDK need different versions of go.temporal.io/api.
//
// It prints "HOSTPORT NAMESPACE" on one line once the server serves, and
// stops it when its standard input ends or it is signalled.
package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"go.temporal.io/server/temporaltest"
)

func main() {
	ts := temporaltest.NewServer()
	fmt.Printf("%s %s\n", ts.GetFrontendHostPort(), ts.GetDefaultNamespace())
	ended := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(ended)
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	select {
	case <-ended:
	case <-sig:
	}
	ts.Stop()
}
