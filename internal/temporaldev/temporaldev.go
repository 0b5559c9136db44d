// Package temporaldev starts the Temporal server of the tests of
// agent/temporal and examples/durable: the command in
// agent/temporal/internal/devserver (go.temporal.io/server's temporaltest
// on 127.0.0.1), built with the Go toolchain it needs and run as a
// process of its own.
package temporaldev

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// BinaryEnv names the environment variable that holds the path of a
// devserver built beforehand (CI builds it in a step of its own, with
// its own time, since a cold build takes many minutes); Start then runs
// it instead of building one.
const BinaryEnv = "MINIME_TEMPORAL_DEVSERVER"

// Toolchain is the Go toolchain the server's module needs; the go command
// fetches it from the module proxy once per machine.
const Toolchain = "go1.26.10"

// Server is a running devserver.
type Server struct {
	// HostPort is the frontend's address, Namespace the namespace the
	// server registered for the tests.
	HostPort, Namespace string

	cmd   *exec.Cmd
	stdin io.WriteCloser
	tmp   string
}

// Start starts the devserver of BinaryEnv, or, when it is unset, builds
// the one in dir (the build cache makes a second build instant) and
// starts it; Stop stops it.
func Start(dir string) (*Server, error) {
	tmp, err := os.MkdirTemp("", "minime-devserver")
	if err != nil {
		return nil, err
	}
	bin := os.Getenv(BinaryEnv)
	if bin == "" {
		if bin, err = build(dir, tmp); err != nil {
			_ = os.RemoveAll(tmp)
			return nil, err
		}
	}
	s := &Server{cmd: exec.Command(bin), tmp: tmp}
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.cmd.Stderr = os.Stderr
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err == nil {
		_, err = fmt.Sscan(line, &s.HostPort, &s.Namespace)
	}
	if err != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("temporaldev: reading the devserver's address from %q: %w", line, err)
	}
	return s, nil
}

// build builds the devserver in dir into the folder tmp.
func build(dir, tmp string) (string, error) {
	bin := filepath.Join(tmp, "devserver")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN="+Toolchain)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("temporaldev: building the devserver (or set %s to a built one): %v\n%s", BinaryEnv, err, out)
	}
	return bin, nil
}

// Stop ends the server's standard input, which stops it, and waits for it.
func (s *Server) Stop() {
	_ = s.stdin.Close()
	_ = s.cmd.Wait()
	_ = os.RemoveAll(s.tmp)
}
