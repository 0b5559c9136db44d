package pgstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"git.rickub.com/bots-garden/mini-me/agent/temporal/pgstore"
	"git.rickub.com/bots-garden/mini-me/internal/oauthtest"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// A worker process (see workerMain) is this test binary run with
// workerEnv set to the MCP server's URL and dsnEnv to the database.
const (
	workerEnv = "MINIME_PGSTORE_WORKER"
	dsnEnv    = "MINIME_PGSTORE_DSN"
)

// signInLifetime is the lifetime of the first access token, in seconds:
// long enough for both workers to start and load it while it is fresh.
// Its renewal point comes a tenth of it before its expiry; the workers
// stop at the first renewal, long before the renewed token's.
const signInLifetime = 5

// TestTwoWorkersRefreshOnce: two worker processes share a signed-in token
// through one PostgreSQL Store, at an authorization server that rotates
// refresh tokens and revokes the grant when a spent one comes back. Both
// call Token concurrently (four goroutines each) as the token reaches its
// renewal point: the server sees exactly one refresh and no reuse, and
// both workers end with the refreshed token, valid at the server.
func TestTwoWorkersRefreshOnce(t *testing.T) {
	as := &oauthtest.Server{Refresh: true, RevokeOnReuse: true, ExpiresIn: signInLifetime}
	as.Start()
	t.Cleanup(as.Close)
	rs := oauthtest.Resource(http.NotFoundHandler(), as, "")
	t.Cleanup(rs.Close)
	resource := rs.URL + "/mcp"

	// The sign-in, by a third Authorizer: the workers find its token in
	// the store.
	ctx := context.Background()
	store := newStore(t, "")
	signIn, err := oauth.New(resource, oauth.Config{Store: store, Browser: oauthtest.Follow, RedirectURL: "http://127.0.0.1:1/callback"})
	if err != nil {
		t.Fatal(err)
	}
	defer signIn.CloseIdleConnections()
	if err := signIn.Challenged(ctx, 401, nil, ""); err != nil {
		t.Fatal(err)
	}
	first, _ := signIn.Token(ctx)

	type worker struct {
		cmd   *exec.Cmd
		stdin interface{ Close() error }
		out   *bufio.Reader
	}
	workers := make([]worker, 2)
	for i := range workers {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), workerEnv+"="+resource, dsnEnv+"="+dsn)
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		workers[i] = worker{cmd, stdin, bufio.NewReader(stdout)}
	}
	for i, w := range workers {
		if line, err := w.out.ReadString('\n'); line != "ready\n" {
			t.Fatalf("worker %d said %q (%v), want ready", i, line, err)
		}
	}
	if n := as.RefreshGrants.Load(); n != 0 {
		t.Fatalf("the token was refreshed %d times before both workers were ready: they started too slowly for a %d s token", n, signInLifetime)
	}
	for _, w := range workers {
		_ = w.stdin.Close() // go
	}
	tokens := make([]string, len(workers))
	for i, w := range workers {
		line, err := w.out.ReadString('\n')
		tok, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "token ")
		if err != nil || !ok {
			t.Errorf("worker %d: no token (%v)", i, err) // the line may hold one: not shown
		}
		tokens[i] = tok
		if err := w.cmd.Wait(); err != nil {
			t.Errorf("worker %d: %v", i, err)
		}
	}
	if n := as.RefreshGrants.Load(); n != 1 {
		t.Errorf("%d refresh requests, want exactly 1", n)
	}
	if n := as.Reuses.Load(); n != 0 {
		t.Errorf("%d reuses of a spent refresh token (the grant was revoked)", n)
	}
	if n := as.CodeGrants.Load(); n != 1 {
		t.Errorf("%d sign-ins, want the first only", n)
	}
	if tokens[0] != tokens[1] || tokens[0] == first || tokens[0] == "" {
		t.Errorf("the workers ended with different tokens, or with the first one")
	}
	for i, tok := range tokens {
		if _, ok := as.Valid(tok); !ok {
			t.Errorf("worker %d's token is not valid at the authorization server", i)
		}
	}
}

// refuse is the workers' Browser: they never sign in themselves.
var refuse = oauth.BrowserFunc(func(context.Context, string, string) (*url.URL, error) {
	return nil, errors.New("a worker does not sign in")
})

// workerMain is a worker process: it adopts the stored token, says
// "ready", waits for its standard input to close, then calls Token from
// four goroutines every 5 ms until the token changes, and prints the new
// one ("token <value>") on its standard output, which only the test reads.
func workerMain() int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := pgxpool.New(ctx, os.Getenv(dsnEnv))
	if err != nil {
		return fail(err)
	}
	defer pool.Close()
	a, err := oauth.New(os.Getenv(workerEnv), oauth.Config{Store: &pgstore.Store{Pool: pool}, Browser: refuse})
	if err != nil {
		return fail(err)
	}
	defer a.CloseIdleConnections()
	if err := a.Challenged(ctx, 401, nil, ""); err != nil {
		return fail(err)
	}
	first, err := a.Token(ctx)
	if err != nil || first == "" {
		return fail(fmt.Errorf("no stored token adopted (%v)", err))
	}
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the test closes it
	var (
		wg   sync.WaitGroup
		once sync.Once
		done = make(chan string, 1)
		errs = make(chan error, 4)
	)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				tok, err := a.Token(ctx)
				switch {
				case err != nil || tok == "":
					errs <- fmt.Errorf("Token returned no token (%v)", err)
					return
				case tok != first:
					once.Do(func() { done <- tok })
					return
				}
				select {
				case <-tick.C:
				case <-ctx.Done():
					errs <- ctx.Err()
					return
				}
			}
		}()
	}
	select {
	case tok := <-done:
		fmt.Println("token " + tok)
	case err := <-errs:
		return fail(err)
	}
	wg.Wait()
	select {
	case err := <-errs:
		return fail(err)
	default:
		return 0
	}
}
