package minime_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README's set-up lines work in the order a person types them, from
// an empty directory: the clone (this checkout, linked in its place), a
// new module, the host program written as the README says, then each way
// of adding mini-me (a replace, a workspace), and go build.
func TestReadmeSetup(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the README's host program in fresh modules")
	}
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	block := regexp.MustCompile("(?s)## Embedding mini-me\n.*?```sh\n(.*?)```").FindSubmatch(readme)
	require.NotNil(t, block, "README.md has no shell block under \"## Embedding mini-me\"")
	setup, ways := setupSteps(t, string(block[1]))
	require.Len(t, ways, 2, "a replace, and a workspace")
	repo, err := os.Getwd()
	require.NoError(t, err)
	host, err := filepath.Abs(filepath.Join("examples", "host", "main.go"))
	require.NoError(t, err)
	var env []string
	for _, kv := range os.Environ() {
		// A person's shell has no workspace or module flags of ours; the
		// proxy and the caches are the environment's.
		if name, _, _ := strings.Cut(kv, "="); name != "GOWORK" && name != "GOFLAGS" {
			env = append(env, kv)
		}
	}
	// The build is the test's step: -trimpath keeps the compiled packages
	// of the clone cached across runs, whose temporary paths differ.
	for i, way := range ways {
		dir := t.TempDir()
		script := "set -e\n" + strings.Join(setup, "\n") + "\ncp \"$MINIME_HOST\" main.go\n" +
			strings.Join(way, "\n") + "\ngo build -trimpath -o \"$MINIME_OUT\" .\n"
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(env, "MINIME_REPO="+repo, "MINIME_HOST="+host, "MINIME_OUT="+filepath.Join(dir, "host"))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "way %d of the README's set-up fails:\n%s\n%s", i+1, script, out)
	}
}

// setupSteps splits the README's shell block: the lines before its first
// comment line set up (the clone, replaced by a link to the checkout, and
// the module), then each comment line starts one way of adding mini-me.
// The first comment is where the code gets written.
func setupSteps(t *testing.T, block string) (setup []string, ways [][]string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(block), "\n")
	require.Regexp(t, `^git clone \S.* mini-me$`, lines[0], "the block starts with the clone")
	setup = []string{`ln -s "$MINIME_REPO" mini-me`}
	for _, line := range lines[1:] {
		switch {
		case strings.HasPrefix(line, "#"):
			if len(ways) == 0 {
				require.Contains(t, line, "main.go", "the first comment says to write the code first")
			}
			ways = append(ways, nil)
		case len(ways) == 0:
			setup = append(setup, line)
		default:
			ways[len(ways)-1] = append(ways[len(ways)-1], line)
		}
	}
	return setup, ways
}
