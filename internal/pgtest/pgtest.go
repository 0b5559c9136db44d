//go:build unix

// Package pgtest runs a PostgreSQL server of its own for a test binary:
// Debian's PostgreSQL (the postgresql package, installed with apt-get when
// missing and the test runs as root), in a temporary directory, on a free
// port of 127.0.0.1, fsync off. Tests that need PostgreSQL never skip: a
// machine without it, and without the right to install it, fails them.
package pgtest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// StartTimeout bounds the wait for a new server to accept connections.
const StartTimeout = 60 * time.Second

// Server is a running PostgreSQL server; Stop ends it.
type Server struct {
	// URL is the address of its database "postgres", as user postgres
	// (no password: the server trusts every local connection).
	URL string
	// Port is the port it listens on, on 127.0.0.1.
	Port int

	dir    string
	proc   *os.Process
	exited chan error
}

// Start runs a new server; call Stop when done (TestMain does both).
func Start() (_ *Server, err error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	attr, err := asPostgres(dir)
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	initdb.SysProcAttr = attr
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "postgres.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-k", dir,
		"-c", "fsync=off", "-c", "full_page_writes=off", "-c", "max_connections=200")
	cmd.SysProcAttr = attr
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pgtest: starting postgres: %w", err)
	}
	s := &Server{
		URL:  fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port),
		Port: port, dir: dir, proc: cmd.Process, exited: make(chan error, 1),
	}
	go func() { s.exited <- cmd.Wait() }()
	if err := s.waitReady(bin); err != nil {
		log, _ := os.ReadFile(logPath)
		_ = s.Stop()
		return nil, fmt.Errorf("%w; its log:\n%s", err, log)
	}
	return s, nil
}

// Stop ends the server (a fast shutdown) and removes its directory.
func (s *Server) Stop() error {
	_ = s.proc.Signal(syscall.SIGINT)
	err := <-s.exited
	s.exited <- err // a second Stop returns at once
	_ = os.RemoveAll(s.dir)
	if err != nil {
		return fmt.Errorf("pgtest: postgres: %w", err)
	}
	return nil
}

// waitReady asks pg_isready until the server accepts connections, it
// exits, or StartTimeout passes.
func (s *Server) waitReady(bin string) error {
	deadline := time.Now().Add(StartTimeout)
	for {
		ready := exec.Command(filepath.Join(bin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "-t", "1")
		if ready.Run() == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgtest: postgres did not accept connections within %v", StartTimeout)
		}
		select {
		case err := <-s.exited:
			s.exited <- err
			return fmt.Errorf("pgtest: postgres exited (%v) before accepting connections", err)
		case <-time.After(100 * time.Millisecond): // starting: ask again
		}
	}
}

// binDir returns the directory of Debian's newest PostgreSQL binaries,
// installing the postgresql package when there is none.
func binDir() (string, error) {
	if d := newestBin(); d != "" {
		return d, nil
	}
	if os.Geteuid() != 0 {
		return "", errors.New("pgtest: no /usr/lib/postgresql/*/bin/initdb, and not root to apt-get install postgresql")
	}
	for _, args := range [][]string{{"update"}, {"install", "-y", "--no-install-recommends", "postgresql"}} {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("pgtest: apt-get %v: %w\n%s", args, err, out)
		}
	}
	if d := newestBin(); d != "" {
		return d, nil
	}
	return "", errors.New("pgtest: postgresql is installed, yet there is no /usr/lib/postgresql/*/bin/initdb")
}

func newestBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	major := func(d string) int { n, _ := strconv.Atoi(filepath.Base(filepath.Dir(d))); return n }
	slices.SortFunc(dirs, func(a, b string) int { return major(b) - major(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	return ""
}

// asPostgres returns how to run PostgreSQL's programs: as the user
// postgres, owner of dir, when this process is root (PostgreSQL refuses
// to run as root); as this process's user otherwise.
func asPostgres(dir string) (*syscall.SysProcAttr, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, PostgreSQL needs another user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}, nil
}

// freePort returns a port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
