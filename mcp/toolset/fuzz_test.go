package toolset

import (
	"regexp"
	"strings"
	"testing"
)

// validToolName is what a Toolset promises of every name: the characters
// model APIs accept, at most MaxToolNameLength of them, no leading,
// trailing or doubled underscore.
var validToolName = regexp.MustCompile(`^[A-Za-z0-9]+([_-][A-Za-z0-9]+)*$`)

// FuzzToolName checks that exposed names are always valid, depend only on
// the original names, and stay distinct when several tools map to the
// same name.
func FuzzToolName(f *testing.F) {
	f.Add("files", "read_file", "files_read", "file")
	f.Add("a-b", "c", "a", "b-c")
	f.Add("", "", "_", "__")
	f.Add("日本", "ツール", "x", "y")
	f.Add(strings.Repeat("s", 40), strings.Repeat("t", 40), strings.Repeat("s", 40), strings.Repeat("t", 41))
	f.Add("srv", strings.Repeat("a_", 40), "srv", strings.Repeat("a__", 40))
	f.Fuzz(func(t *testing.T, s1, t1, s2, t2 string) {
		for _, n := range [][2]string{{s1, t1}, {s2, t2}} {
			name := ToolName(n[0], n[1])
			if len(name) > MaxToolNameLength || !validToolName.MatchString(name) {
				t.Fatalf("ToolName(%q, %q) = %q", n[0], n[1], name)
			}
			if name != ToolName(n[0], n[1]) {
				t.Fatalf("ToolName(%q, %q) is not deterministic", n[0], n[1])
			}
		}
		// Four tools whose names may collide, placed in both orders: every
		// name is valid and unique, and the first placed keeps its
		// natural name.
		tools := [][2]string{{s1, t1}, {s2, t2}, {s1, t2}, {s2, t1}}
		for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}} {
			taken := map[string][2]string{}
			for k, i := range order {
				s, tl := tools[i][0], tools[i][1]
				name := uniqueName(s, tl, func(n string) bool { _, ok := taken[n]; return ok })
				if len(name) > MaxToolNameLength || !validToolName.MatchString(name) {
					t.Fatalf("uniqueName(%q, %q) = %q", s, tl, name)
				}
				if prev, ok := taken[name]; ok {
					t.Fatalf("%q given to %q and %q", name, prev, tools[i])
				}
				if k == 0 && name != ToolName(s, tl) {
					t.Fatalf("first tool %q named %q, not %q", tools[i], name, ToolName(s, tl))
				}
				taken[name] = tools[i]
			}
		}
	})
}
