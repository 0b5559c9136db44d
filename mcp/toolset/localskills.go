package toolset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// LocalServer is the Server of the skills found in local folders, in a
// Toolset's skill catalogue: no configured server can have that name.
const LocalServer = "(local)"

// localSkill is a skill found in a local folder: its entry, built as a
// server would build it, and the folder on disk.
type localSkill struct {
	skill mcp.Skill
	dir   string // absolute, symlinks resolved
}

// scanSkillFolders finds the skills of each folder: a folder holding
// SKILL.md is a skill, any other folder is searched one level down for
// skills. What cannot be used is reported as warnings. It stops when ctx
// ends, with ctx's error and nothing else: the caller keeps the skills it
// had.
func scanSkillFolders(ctx context.Context, folders []string) ([]localSkill, []Warning, error) {
	var out []localSkill
	var warns []Warning
	warn := func(msg string, args ...any) {
		warns = append(warns, Warning{Server: LocalServer, Kind: WarnInvalidSkill, Message: fmt.Sprintf(msg, args...)})
	}
	for _, folder := range folders {
		dirs := []string{folder}
		if _, err := os.Lstat(filepath.Join(folder, "SKILL.md")); errors.Is(err, fs.ErrNotExist) {
			entries, err := os.ReadDir(folder)
			if err != nil {
				warn("skill folder %q: %v", folder, err)
				continue
			}
			dirs = dirs[:0]
			for _, e := range entries {
				if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
					if _, err := os.Lstat(filepath.Join(folder, e.Name(), "SKILL.md")); err == nil {
						dirs = append(dirs, filepath.Join(folder, e.Name()))
					}
				}
			}
		}
		for _, dir := range dirs {
			ls, err := scanSkill(ctx, dir)
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			if err != nil {
				warn("skill %q left out: %v", dir, err)
				continue
			}
			out = append(out, ls)
		}
	}
	return out, warns, ctx.Err()
}

// scanSkill builds the entry of the skill in dir: its frontmatter and the
// manifest of every regular file in it, with digests; other files (a
// FIFO, a device, a socket) are skipped without being opened. Symlinks are
// followed only when they stay inside dir; others are refused. It stops
// when ctx ends.
func scanSkill(ctx context.Context, dir string) (localSkill, error) {
	root, err := filepath.Abs(dir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return localSkill{}, err
	}
	base := (&url.URL{Scheme: "file", Path: filepath.ToSlash(root)}).String()
	ls := localSkill{dir: root, skill: mcp.Skill{URI: base + "/SKILL.md"}}
	var total int64
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir // .git and the like
			}
			return nil
		}
		if !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
			return nil // opening a FIFO would block
		}
		rel, _ := filepath.Rel(root, p)
		data, err := readInside(root, filepath.ToSlash(rel), mcp.MaxSkillSize-total)
		if errors.Is(err, errNotRegular) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(ls.skill.Files) == mcp.MaxSkillFiles {
			return fmt.Errorf("more than %d files", mcp.MaxSkillFiles)
		}
		total += int64(len(data))
		ls.skill.Files = append(ls.skill.Files, mcp.SkillFile{URI: base + "/" + (&url.URL{Path: filepath.ToSlash(rel)}).EscapedPath(),
			Digest: mcp.FileDigest(data), Size: int64(len(data))})
		if rel == "SKILL.md" {
			if ls.skill.Frontmatter, err = mcp.ParseFrontmatter(data); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return localSkill{}, err
	}
	if ls.skill.Frontmatter == nil {
		return localSkill{}, errors.New("no SKILL.md")
	}
	if err := ls.skill.Validate(); err != nil {
		return localSkill{}, err
	}
	return ls, nil
}

var (
	errNotRegular = errors.New("not a regular file")
	errOverLimit  = errors.New("over the size limit")
)

// readInside reads the file rel of folder root, at most limit bytes. The
// path must stay inside root once every symlink is resolved; what is not
// a regular file is errNotRegular, found before it is opened (opening a
// FIFO blocks).
func readInside(root, rel string, limit int64) ([]byte, error) {
	p := filepath.Join(root, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, err
	}
	if r, err := filepath.Rel(root, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return nil, fmt.Errorf("%s: leaves the skill's folder", rel)
	}
	if st, err := os.Stat(real); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, errNotRegular
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: %w", rel, errOverLimit)
	}
	return data, nil
}

// read reads a file of the skill from disk, fresh, and verifies it
// against the entry made when the folder was scanned: a file changed
// since fails verification rather than being trusted.
func (ls *localSkill) read(ref string) (*mcp.SkillContent, error) {
	return ls.skill.ReadVerified(ref, func(_, path string, max int64) ([]byte, string, error) {
		data, err := readInside(ls.dir, path, max)
		if errors.Is(err, errOverLimit) {
			return nil, "", &mcp.SkillVerificationError{URI: ls.skill.Root() + "/" + path, Reason: mcp.SkillSize}
		}
		if err != nil {
			return nil, "", fmt.Errorf("toolset: local skill %q: %w", ls.skill.Name(), err)
		}
		return data, mimeOf(path), nil
	})
}

func mimeOf(name string) string {
	if strings.HasSuffix(name, ".md") {
		return "text/markdown"
	}
	return ""
}
