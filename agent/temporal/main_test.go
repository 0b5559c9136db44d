package temporal_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"git.rickub.com/bots-garden/mini-me/internal/temporaldev"
)

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		os.Exit(workerMain())
	}
	var err error
	if server, err = temporaldev.Start("internal/devserver"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	server.Stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
