package minime_test

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// maxOverviewLines is how far down `go doc PKG` the index of a package
// may start: a package overview is a screen (net/http's is the model), and
// the detail belongs in the docs of the types and functions it is about.
const maxOverviewLines = 60

// nestedModules are the modules inside this repository whose packages are
// held to the same rule. A nested module whose packages cannot be listed
// (its dependencies not downloaded) is skipped, saying why.
var nestedModules = []string{"agent/otel", "agent/temporal", "agent/session/sqlite", "agent/session/postgres"}

// indexLine is the first line of the index of `go doc PKG`'s output.
var indexLine = regexp.MustCompile(`^(func |type |const|var)`)

// Every package's `go doc` output reaches its index within
// maxOverviewLines lines (issue 40 item 5); a package without an index (a
// command, a doc-only package) has a whole output that short.
func TestGoDocOverviewsAreShort(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not installed")
	}
	checkModule(t, goTool, ".", true)
	for _, dir := range nestedModules {
		t.Run(dir, func(t *testing.T) { checkModule(t, goTool, dir, false) })
	}
}

// checkModule checks every package of the module in dir; root says whether
// a failure to list its packages is an error rather than a reason to skip.
func checkModule(t *testing.T, goTool, dir string, root bool) {
	t.Helper()
	// A package of tests only has no documentation to show.
	list := exec.Command(goTool, "list", "-f", "{{if .GoFiles}}{{.ImportPath}}{{end}}", "./...")
	list.Dir = dir
	var stderr bytes.Buffer
	list.Stderr = &stderr
	out, err := list.Output()
	if err != nil {
		if root {
			t.Fatalf("go list ./... in %s: %v\n%s", dir, err, stderr.String())
		}
		t.Skipf("go list ./... in %s: %v\n%s", dir, err, stderr.String())
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) == 0 {
		t.Fatalf("go list ./... in %s listed no package", dir)
	}
	for _, pkg := range pkgs {
		doc := exec.Command(goTool, "doc", pkg)
		doc.Dir = dir
		text, err := doc.Output()
		if err != nil {
			t.Errorf("go doc %s: %v", pkg, err)
			continue
		}
		if line, ok := overviewLength(string(text)); line > maxOverviewLines {
			if ok {
				t.Errorf("go doc %s: the index starts at line %d, after line %d: move detail from the package comment to the docs of its types and functions",
					pkg, line, maxOverviewLines)
			} else {
				t.Errorf("go doc %s: %d lines with no index, more than %d", pkg, line, maxOverviewLines)
			}
		}
	}
}

// overviewLength returns the line number of the first index line of a
// `go doc` output, and true; or, when it has none, its number of lines and
// false.
func overviewLength(text string) (int, bool) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		if indexLine.MatchString(l) {
			return i + 1, true
		}
	}
	return len(lines), false
}
