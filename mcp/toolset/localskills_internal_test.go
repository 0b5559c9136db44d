package toolset

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The scan of local skill folders stops when its context ends, and says
// so: a caller keeps the catalogue it had.
func TestScanSkillFoldersHonoursContext(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "review"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "review", "SKILL.md"), []byte("---\nname: review\ndescription: d\n---\n"), 0o644))

	local, _, err := scanSkillFolders(context.Background(), []string{dir})
	require.NoError(t, err)
	require.Len(t, local, 1)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	local, warns, err := scanSkillFolders(ctx, []string{dir})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, local)
	assert.Empty(t, warns)
}
