//go:build unix

package oauth_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"git.rickub.com/bots-garden/mini-me/internal/oauthtest"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// A damaged token file kept aside as .corrupt is for its owner only,
// whatever its mode was (issue 35 #16): it may hold tokens all the same.
func TestCorruptTokenFileKeptPrivate(t *testing.T) {
	as := &oauthtest.Server{}
	resource, _ := setup(t, as)
	path := filepath.Join(t.TempDir(), "tokens.json")
	const content = `[{"resource": "x", "token": {"access_token": "at-half-written-` + oauthtest.Sentinel
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}
	signedIn(t, resource, oauth.Config{Store: &oauth.FileStore{Path: path}})
	fi, err := os.Stat(path + ".corrupt")
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Errorf(".corrupt has mode %04o, want 0600", mode)
	}
	if old, _ := os.ReadFile(path + ".corrupt"); string(old) != content {
		t.Errorf(".corrupt holds %q, want the old content", old)
	}
}

// A token file others can read is used, with a warning that names it and
// its mode, and never a token.
func TestReadableTokenFileWarned(t *testing.T) {
	as := &oauthtest.Server{}
	resource, _ := setup(t, as)
	path := filepath.Join(t.TempDir(), "tokens.json")
	_, _, tok := signedIn(t, resource, oauth.Config{Store: &oauth.FileStore{Path: path}})
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	_, _, again := signedIn(t, resource, oauth.Config{Store: &oauth.FileStore{Path: path}, Browser: stopBrowser, Logger: log})
	if again != tok {
		t.Errorf("the stored token was not used: %q", again)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), path) || !strings.Contains(logs.String(), "0644") {
		t.Errorf("no warning naming the file and its mode: %q", logs.String())
	}
	if strings.Contains(logs.String(), oauthtest.Sentinel) {
		t.Errorf("a token in the log: %q", logs.String())
	}
}
