package pgstore_test

import (
	"context"
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
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

// dsn is the database of the PostgreSQL server TestMain started.
var dsn string

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		os.Exit(workerMain())
	}
	stop, err := startPostgres()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgstore tests: starting PostgreSQL:", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, "pgstore tests: stopping PostgreSQL:", err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// postgresBin returns the directory of Debian's newest PostgreSQL
// binaries, installing the postgresql package with apt-get when there is
// none (CI runs these tests: they never skip).
func postgresBin() (string, error) {
	find := func() string {
		dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		slices.SortFunc(dirs, func(a, b string) int { return version(a) - version(b) })
		for _, d := range slices.Backward(dirs) {
			if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
				return d
			}
		}
		return ""
	}
	if d := find(); d != "" {
		return d, nil
	}
	if os.Geteuid() != 0 {
		return "", errors.New("no /usr/lib/postgresql/*/bin/initdb, and not root to apt-get install postgresql")
	}
	for _, args := range [][]string{{"update"}, {"install", "-y", "--no-install-recommends", "postgresql"}} {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("apt-get %v: %w\n%s", args, err, out)
		}
	}
	if d := find(); d != "" {
		return d, nil
	}
	return "", errors.New("apt-get installed postgresql, yet there is no /usr/lib/postgresql/*/bin/initdb")
}

// version is the major version in /usr/lib/postgresql/<version>/bin.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// startPostgres runs a PostgreSQL server of its own, in a temporary
// directory (its unix socket too), on a free port of 127.0.0.1, as the
// user postgres when the test runs as root (PostgreSQL refuses root); it
// sets dsn, and stop ends that server and removes the directory.
func startPostgres() (stop func() error, err error) {
	bin, err := postgresBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgstore-test-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	attr := &syscall.SysProcAttr{}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root, PostgreSQL needs another user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
		attr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	initdb.SysProcAttr = attr
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	_ = l.Close()
	logFile, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	server := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-h", "127.0.0.1", "-p", port, "-k", dir,
		"-c", "fsync=off", "-c", "full_page_writes=off")
	server.SysProcAttr = attr
	server.Stdout, server.Stderr = logFile, logFile
	if err := server.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- server.Wait() }()
	stop = func() error {
		_ = server.Process.Signal(syscall.SIGINT) // fast shutdown
		err := <-exited
		_ = os.RemoveAll(dir)
		if err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
		return nil
	}
	url := "postgres://postgres@127.0.0.1:" + port + "/postgres?sslmode=disable"
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, cerr := pgx.Connect(ctx, url)
		if cerr == nil {
			_ = conn.Close(ctx)
			cancel()
			dsn = url
			return stop, nil
		}
		cancel()
		select {
		case werr := <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
			return nil, fmt.Errorf("postgres exited (%v) before accepting connections:\n%s", werr, log)
		case <-time.After(100 * time.Millisecond): // the server is starting: try again
		}
		if time.Now().After(deadline) {
			_ = stop()
			return nil, fmt.Errorf("postgres did not accept connections within 30 s: %w", cerr)
		}
	}
}
