package minime_test

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// executableMagic are the first bytes of the executable formats Go builds
// (ELF, Mach-O 32/64 in both byte orders, PE).
var executableMagic = [][]byte{
	{0x7f, 'E', 'L', 'F'},
	{0xfe, 0xed, 0xfa, 0xce}, {0xce, 0xfa, 0xed, 0xfe},
	{0xfe, 0xed, 0xfa, 0xcf}, {0xcf, 0xfa, 0xed, 0xfe},
	{'M', 'Z'},
}

// No build output is committed: a binary left by `go build ./examples/NAME`
// at the root once rode in every clone (3.4 MB). .gitignore keeps them out;
// this catches one added by force or under another name.
func TestNoCommittedExecutables(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: cannot list the tracked files")
	}
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	files := bytes.Split(bytes.TrimRight(out, "\x00"), []byte{0})
	require.NotEmpty(t, files)
	for _, name := range files {
		f, err := os.Open(string(name))
		if err != nil {
			continue // deleted in the work tree, not yet committed
		}
		head := make([]byte, 4)
		n, _ := f.Read(head)
		f.Close()
		for _, magic := range executableMagic {
			if n >= len(magic) && bytes.Equal(head[:len(magic)], magic) {
				t.Errorf("%s is an executable committed to the repository: remove it and ignore it", name)
			}
		}
	}
}
