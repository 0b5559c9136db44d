package minime_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The README's host program is examples/host/main.go, which go build
// compiles: the two must not drift apart.
func TestReadmeExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	block := regexp.MustCompile("(?s)## Embedding mini-me\n.*?```go\n(.*?)```").FindSubmatch(readme)
	require.NotNil(t, block, "README.md has no Go block under \"## Embedding mini-me\"")
	src, err := os.ReadFile(filepath.Join("examples", "host", "main.go"))
	require.NoError(t, err)
	assert.Equal(t, string(src), string(block[1]), "the README's host program is examples/host/main.go")
	assert.Contains(t, string(block[1]), "package main\n", "a whole program")
}
