package minime_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The README's embedding example is the body of Example, which go test
// compiles: the two must not drift apart.
func TestReadmeExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	block := regexp.MustCompile("(?s)## Embedding mini-me\n.*?```go\n(.*?)```").FindSubmatch(readme)
	require.NotNil(t, block, "README.md has no Go block under \"## Embedding mini-me\"")

	src, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "example_test.go", src, 0)
	require.NoError(t, err)
	var body string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "Example" {
			body = string(src[fset.Position(fn.Body.Lbrace).Offset+2 : fset.Position(fn.Body.Rbrace).Offset])
		}
	}
	require.NotEmpty(t, body, "example_test.go has no func Example")
	var want strings.Builder
	for _, line := range strings.SplitAfter(body, "\n") {
		want.WriteString(strings.TrimPrefix(line, "\t"))
	}
	assert.Equal(t, want.String(), string(block[1]))
	assert.LessOrEqual(t, strings.Count(want.String(), "\n"), 25, "the README's example stays short")
}
