package config

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The format documented on Config, Server and Auth (config.go) must stay
// the format parsed: its example is testdata/full.yaml, which
// TestParseEveryKey parses, and it documents every key the decoder knows.
func TestDocMatchesDecoder(t *testing.T) {
	src, err := os.ReadFile("config.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(src)

	_, after, ok := strings.Cut(doc, "// A complete file, every key used:\n//\n")
	if !ok {
		t.Fatal("config.go: example not found")
	}
	var example strings.Builder
	for _, line := range strings.Split(after, "\n") {
		code, ok := strings.CutPrefix(line, "//\t")
		if !ok {
			break
		}
		example.WriteString(code + "\n")
	}
	full, err := os.ReadFile("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if example.String() != string(full) {
		t.Errorf("the example of config.go differs from testdata/full.yaml:\n%s", example.String())
	}

	for _, keys := range [][]string{rootKeys, mcpKeys, serverKeys, authKeys} {
		for _, k := range keys {
			if !strings.Contains(doc, "//   - "+k+":") {
				t.Errorf("config.go does not document the key %s", k)
			}
			if !regexp.MustCompile(`(?m)^[ -]*` + k + `:`).MatchString(example.String()) {
				t.Errorf("the example of config.go does not use the key %s", k)
			}
		}
	}
}
