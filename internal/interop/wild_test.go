//go:build unix

package interop

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// wildServer is an MCP server on another SDK release, run as its own
// process and tapped on the server side (testdata/servers/tap, and the
// same lines from testdata/node/tssdk-server.cjs).
type wildServer struct {
	name string
	// command returns the program and its arguments for mode: "stdio",
	// "http" or "http-stateless".
	command func(t *testing.T, mode string) (string, []string)
	// dir is where the program runs.
	dir func(t *testing.T) string
}

// goServer is a program of testdata/servers, built (and cached) on first
// use: -http, -stateless select the mode.
func goServer(name string) wildServer {
	return wildServer{
		name: name,
		command: func(t *testing.T, mode string) (string, []string) {
			bin := buildServer(t, name)
			switch mode {
			case "http":
				return bin, []string{"-http"}
			case "http-stateless":
				return bin, []string{"-http", "-stateless"}
			}
			return bin, nil
		},
		dir: func(t *testing.T) string { return t.TempDir() },
	}
}

// nodeServer is testdata/node/tssdk-server.cjs on the TypeScript SDK
// package pkg of the npm install.
func nodeServer(pkg string) wildServer {
	return wildServer{
		name: "tssdk-" + pkg,
		command: func(t *testing.T, mode string) (string, []string) {
			node, dir := everythingInstall(t)
			script, err := filepath.Abs(filepath.Join("testdata", "node", "tssdk-server.cjs"))
			require.NoError(t, err)
			harness, err := filepath.Abs(filepath.Join("testdata", "node", "harness.cjs"))
			require.NoError(t, err)
			return node, []string{"--require", harness, script, dir, pkg, mode}
		},
		dir: func(t *testing.T) string { _, dir := everythingInstall(t); return dir },
	}
}

// TestServersInTheWild connects to servers built on other SDKs and older
// releases — go-sdk releases from before the 2026-07-28 revision, go-sdk
// v1.8.0 narrowed to the handshake versions (it answers the discover probe
// -32022), mcp-go of early 2026, the TypeScript SDK 1.x old and recent —
// over stdio and Streamable HTTP, and counts on the server's side: one
// process per stdio connection, one initialize and one
// notifications/initialized per connection, every session issued ended.
func TestServersInTheWild(t *testing.T) {
	servers := []wildServer{
		goServer("gosdk-v1.2.0"),
		goServer("gosdk-v1.6.1"),
		goServer("gosdk-v1.8.0-legacy"),
		goServer("mcpgo-v0.44.1"),
		nodeServer("sdk-1.12.1"),
		nodeServer("@modelcontextprotocol/sdk"),
	}
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			for _, mode := range []string{"stdio", "http", "http-stateless"} {
				t.Run(mode, func(t *testing.T) { testWild(t, s, mode) })
			}
		})
	}
}

func testWild(t *testing.T, s wildServer, mode string) {
	tapFile := filepath.Join(t.TempDir(), "tap")
	name, args := s.command(t, mode)
	var tr mcp.Transport
	if mode == "stdio" {
		tr = &mcp.CommandTransport{Command: name, Args: args, Dir: s.dir(t), Env: map[string]string{"MINIME_INTEROP_TAP": tapFile}}
	} else {
		p := startProcess(t, s.dir(t), []string{"MINIME_INTEROP_TAP=" + tapFile}, name, args...)
		line, err := p.waitLine(listeningLine, startTimeout)
		require.NoError(t, err, "%s did not start; output:\n%s", s.name, p.out)
		tr = &mcp.HTTPTransport{URL: "http://" + strings.TrimPrefix(line, listeningLine) + "/mcp"}
	}
	ctx, cancel := stepContext()
	defer cancel()
	c, err := mcp.Connect(ctx, tr, nil)
	require.NoError(t, err, "the first connection attempt")
	assert.Equal(t, mcp.EraLegacy, c.Era())
	res, err := c.CallTool(ctx, "echo", map[string]string{"text": "wild"})
	if assert.NoError(t, err) {
		assert.Equal(t, "echo: wild", res.Text())
	}
	tools, err := c.ListTools(ctx)
	if assert.NoError(t, err) && assert.Len(t, tools, 1) {
		assert.Equal(t, "echo", tools[0].Name)
	}
	require.NoError(t, c.Close())

	got := readTap(t, tapFile)
	t.Logf("%s over %s, as the server saw it: %v", s.name, mode, got)
	assert.Equal(t, 1, got.count("start"), "process starts")
	assert.Equal(t, 1, got.count("method initialize"), "initialize requests")
	assert.Equal(t, 1, got.count("method notifications/initialized"), "initialized notifications")
	assert.LessOrEqual(t, got.count("method server/discover"), 1, "discover probes")
	issued, ended := got.values("session"), got.values("delete")
	assert.ElementsMatch(t, issued, ended, "sessions issued and ended with DELETE")
}

// tapLines are the events a tapped server recorded, in order.
type tapLines []string

func readTap(t *testing.T, path string) tapLines {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err, "the server recorded nothing")
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// count returns how many events are kind, with or without a value.
func (l tapLines) count(kind string) int {
	n := 0
	for _, e := range l {
		if e == kind || strings.HasPrefix(e, kind+" ") {
			n++
		}
	}
	return n
}

// values returns the values of the events of one kind.
func (l tapLines) values(kind string) []string {
	var v []string
	for _, e := range l {
		if rest, ok := strings.CutPrefix(e, kind+" "); ok {
			v = append(v, rest)
		}
	}
	return v
}

// buildMu serializes the builds of testdata/servers: they share one cache.
var buildMu sync.Mutex

// buildServer builds the program testdata/servers/name, in its own module
// (a module can require one release of a module only), into the interop
// cache, keyed by a hash of everything under testdata/servers: a second
// run, or a second test, reuses the binary.
func buildServer(t *testing.T, name string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		unavailable(t, "go is not on PATH")
	}
	src, err := filepath.Abs(filepath.Join("testdata", "servers"))
	require.NoError(t, err)
	npm, err := npmInstallDir()
	require.NoError(t, err)
	bin := filepath.Join(filepath.Dir(npm), "bin-"+sourceHash(t, src), name)
	buildMu.Lock()
	defer buildMu.Unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	tmp := bin + ".tmp"
	start := time.Now()
	cmd := exec.Command(goBin, "build", "-o", tmp, ".")
	cmd.Dir = filepath.Join(src, name)
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		unavailable(t, "go build %s: %v\n%s", name, err, out)
	}
	require.NoError(t, os.Rename(tmp, bin))
	t.Logf("built %s in %v", name, time.Since(start).Round(time.Millisecond))
	return bin
}

// sourceHash hashes the names and contents of the files under dir.
func sourceHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		h.Write([]byte(rel + "\x00"))
		h.Write(b)
		h.Write([]byte{0})
		return nil
	})
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil))[:16]
}
