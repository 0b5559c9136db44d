//go:build unix

package toolset_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// A FIFO (or any file that is not regular) in a skill folder, or a symlink
// to one, is skipped without being opened: opening a FIFO blocks until a
// writer comes, and would block Discover with it.
func TestLocalSkillWithFIFO(t *testing.T) {
	dir := t.TempDir()
	skill := writeSkill(t, dir, "review", map[string]string{"SKILL.md": "---\nname: review\ndescription: Review code\n---\nBody\n"})
	fifo := filepath.Join(skill, "pipe")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	require.NoError(t, os.Symlink("pipe", filepath.Join(skill, "link")))
	t.Cleanup(func() {
		// Should the scan be blocked on the FIFO, a writer releases it.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})

	type result struct {
		ts  *toolset.Toolset
		err error
	}
	done := make(chan result, 1)
	go func() {
		ts, err := toolset.Discover(context.Background(), nil, &toolset.Options{SkillFolders: []string{dir}})
		done <- result{ts, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Discover blocked on the FIFO")
	}
	require.NoError(t, r.err)
	defer r.ts.Close()
	assert.Equal(t, []string{"review"}, skillNames(r.ts))
	sk, ok := r.ts.Skill("review")
	require.True(t, ok)
	require.Len(t, sk.Skill.Files, 1, "only SKILL.md: the FIFO and the link to it are not files of the skill")
	_, err := r.ts.ReadSkillFile(context.Background(), "review", "pipe")
	assert.Error(t, err)
}
