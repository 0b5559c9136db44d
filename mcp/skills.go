package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// SkillsExtension is the identifier of the MCP Skills extension
// (SEP-2640): a server that declares it serves Agent Skills through
// skills/list, skills/get and resources/read.
const SkillsExtension = "io.modelcontextprotocol/skills"

// Limits of one skill, from the extension: a host must support skills up
// to them, and this client declines larger ones before reading anything.
const (
	// MaxSkillFiles bounds the files of one skill's manifest, SKILL.md
	// included.
	MaxSkillFiles = 512
	// MaxSkillSize bounds the sum of the sizes in one skill's manifest,
	// and the bytes read from a "dynamic" skill.
	MaxSkillSize = 16 << 20
)

// ErrSkillsUnsupported is returned by the skills methods of a Client whose
// server did not declare SkillsExtension (or, for ReadSkillDirectory, did
// not declare directoryRead).
var ErrSkillsUnsupported = errors.New("mcp: server does not offer skills")

// Skill is one skill entry of a server: its SKILL.md URI, its frontmatter
// and the manifest of its files. It is what the host holds while acting on
// the skill: every file read is checked against it.
type Skill struct {
	// URI is the URI of the skill's SKILL.md.
	URI string `json:"uri"`
	// Frontmatter is the SKILL.md frontmatter as the server rendered it
	// in JSON, raw; Name and Description read it.
	Frontmatter json.RawMessage `json:"frontmatter"`
	// Files is the manifest: every file of the skill with its digest and
	// size. It is nil for a dynamic skill.
	Files []SkillFile `json:"-"`
	// Dynamic is true when the server publishes no manifest (resources:
	// "dynamic"): its files are not verified against digests, only its
	// frontmatter is.
	Dynamic bool `json:"-"`
	// Meta is the entry's _meta object.
	Meta json.RawMessage `json:"_meta,omitempty"`

	name, description string
}

// SkillFile is one file of a skill's manifest.
type SkillFile struct {
	// URI is the file's resource URI.
	URI string `json:"uri"`
	// Digest is "sha256:" and the lowercase hex SHA-256 of its bytes.
	Digest string `json:"digest"`
	// Size is the length of its bytes.
	Size int64 `json:"size"`
}

// Name is the skill's name, from its frontmatter.
func (s *Skill) Name() string { return s.name }

// Description is the skill's description, from its frontmatter: what the
// model reads to decide whether to load the skill.
func (s *Skill) Description() string { return s.description }

// Root is the URI of the skill's folder: URI without "/SKILL.md".
func (s *Skill) Root() string { return strings.TrimSuffix(s.URI, "/SKILL.md") }

// Size is the sum of the manifest's sizes (0 for a dynamic skill).
func (s *Skill) Size() int64 {
	var n int64
	for _, f := range s.Files {
		n += f.Size
	}
	return n
}

// UnmarshalJSON decodes an entry and checks it: the manifest is a list or
// "dynamic", the frontmatter an object with a valid name and a
// description, the URI a SKILL.md in a folder named after the skill, the
// manifest's URIs inside that folder, each once, SKILL.md among them.
func (s *Skill) UnmarshalJSON(b []byte) error {
	type plain Skill
	var w struct {
		plain
		Resources json.RawMessage `json:"resources"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = Skill(w.plain)
	switch r := bytes.TrimSpace(w.Resources); {
	case len(r) == 0 || string(r) == "null":
		return errors.New("skill entry has no resources")
	case string(r) == `"dynamic"`:
		s.Dynamic = true
	case r[0] == '[':
		if err := json.Unmarshal(r, &s.Files); err != nil {
			return fmt.Errorf("skill resources: %w", err)
		}
	default:
		return errors.New(`skill resources are neither a list nor "dynamic"`)
	}
	return s.Validate()
}

// MarshalJSON encodes the entry as the server sent it.
func (s Skill) MarshalJSON() ([]byte, error) {
	type plain Skill
	var res any = s.Files
	if s.Dynamic {
		res = "dynamic"
	} else if s.Files == nil {
		res = []SkillFile{}
	}
	return json.Marshal(struct {
		plain
		Resources any `json:"resources"`
	}{plain(s), res})
}

// Validate checks an entry as UnmarshalJSON does (frontmatter, name,
// folder, manifest limits) and sets what Name and Description return: a
// host that builds a Skill itself (from a folder on disk) calls it before
// using the entry.
func (s *Skill) Validate() error {
	var fm struct {
		Name        *string `json:"name"`
		Description *string `json:"description"`
	}
	if len(s.Frontmatter) == 0 || json.Unmarshal(s.Frontmatter, &fm) != nil || s.Frontmatter[0] != '{' {
		return errors.New("skill frontmatter is not an object")
	}
	if fm.Name == nil || fm.Description == nil {
		return errors.New("skill frontmatter lacks a name or a description")
	}
	s.name, s.description = *fm.Name, *fm.Description
	if !ValidSkillName(s.name) {
		return fmt.Errorf("skill name %q: want 1 to 64 lowercase letters, digits and single hyphens", clip(s.name, 80))
	}
	if s.description == "" {
		return fmt.Errorf("skill %q: empty description", s.name)
	}
	root, ok := strings.CutSuffix(s.URI, "/SKILL.md")
	if !ok || strings.ContainsAny(s.URI, "?#") {
		return fmt.Errorf("skill %q: uri %q is not a SKILL.md", s.name, clip(s.URI, 120))
	}
	if last := root[strings.LastIndexAny(root, "/")+1:]; last != s.name {
		return fmt.Errorf("skill %q: its folder in %q is named %q", s.name, clip(s.URI, 120), clip(last, 80))
	}
	if s.Dynamic {
		return nil
	}
	if len(s.Files) > MaxSkillFiles {
		return fmt.Errorf("skill %q: %d files, more than the limit of %d", s.name, len(s.Files), MaxSkillFiles)
	}
	seen := make(map[string]bool, len(s.Files))
	self := false
	var total int64
	for _, f := range s.Files {
		rel, err := relativeRef(root, f.URI)
		if err != nil {
			return fmt.Errorf("skill %q: file %q: %w", s.name, clip(f.URI, 120), err)
		}
		if seen[rel] {
			return fmt.Errorf("skill %q: file %q listed twice", s.name, clip(f.URI, 120))
		}
		seen[rel] = true
		self = self || rel == "SKILL.md"
		if !validDigest(f.Digest) || f.Size < 0 {
			return fmt.Errorf("skill %q: file %q: invalid digest or size", s.name, clip(f.URI, 120))
		}
		total += f.Size
	}
	if !self {
		return fmt.Errorf("skill %q: its manifest does not list SKILL.md", s.name)
	}
	if total > MaxSkillSize {
		return fmt.Errorf("skill %q: %d bytes, more than the limit of %d", s.name, total, MaxSkillSize)
	}
	return nil
}

// ValidSkillName reports a name of the Agent Skills format: 1 to 64
// lowercase letters, digits and hyphens, with no hyphen first, last or
// next to another.
func ValidSkillName(name string) bool {
	if len(name) == 0 || len(name) > 64 || name[0] == '-' || name[len(name)-1] == '-' || strings.Contains(name, "--") {
		return false
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

func validDigest(d string) bool {
	hex, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(hex) != 64 {
		return false
	}
	for _, c := range hex {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// SkillList is one listing of a server's skills.
type SkillList struct {
	// Skills are the valid entries, in the server's order.
	Skills []Skill
	// Invalid are the entries left out, each with why: a host must not
	// load them.
	Invalid []InvalidSkill
	// FreshUntil is until when the listing may be used without listing
	// again (the smallest ttlMs of its pages); zero when the server gave
	// no lifetime.
	FreshUntil time.Time
}

// InvalidSkill is an entry of a listing that cannot be used.
type InvalidSkill struct {
	// URI is the entry's uri, if it had one.
	URI string
	// Err says what is wrong with it.
	Err error
}

// SkillsSupported reports whether the server declared SkillsExtension,
// and whether it declared directoryRead (resources/directory/read). A
// declaration that is not an object counts as none.
func (c *Client) SkillsSupported() (skills, directoryRead bool) {
	var ext map[string]json.RawMessage
	if json.Unmarshal(c.Capabilities().Extensions, &ext) != nil {
		return false, false
	}
	raw := bytes.TrimSpace(ext[SkillsExtension])
	if len(raw) == 0 || raw[0] != '{' {
		return false, false
	}
	var settings struct {
		DirectoryRead bool `json:"directoryRead"`
	}
	_ = json.Unmarshal(raw, &settings) // a wrong type reads as false
	return true, settings.DirectoryRead
}

// ListSkills lists every skill of the server, following every page. It
// reads no skill file. Invalid entries are left out and reported in
// SkillList.Invalid (and the log): one bad entry does not hide the others.
func (c *Client) ListSkills(ctx context.Context) (*SkillList, error) {
	if ok, _ := c.SkillsSupported(); !ok {
		return nil, fmt.Errorf("%w: skills/list", ErrSkillsUnsupported)
	}
	var life pageLife
	entries, err := listAll(ctx, c, "skills/list", func(p *skillsPage) ([]json.RawMessage, *string) {
		life.page(p.TTLMs)
		return p.Skills, p.NextCursor
	})
	if err != nil {
		return nil, err
	}
	l := &SkillList{FreshUntil: life.until()}
	seen := map[string]int{}
	for _, raw := range entries {
		var s Skill
		if err := json.Unmarshal(raw, &s); err != nil {
			var u struct {
				URI string `json:"uri"`
			}
			_ = json.Unmarshal(raw, &u)
			l.Invalid = append(l.Invalid, InvalidSkill{URI: u.URI, Err: err})
			c.log.Warn("mcp: skill left out", "uri", clip(u.URI, 120), "reason", err)
			continue
		}
		seen[s.URI]++
		l.Skills = append(l.Skills, s)
	}
	// A URI listed twice is ambiguous: neither copy is used.
	kept := l.Skills[:0]
	for _, s := range l.Skills {
		if seen[s.URI] > 1 {
			l.Invalid = append(l.Invalid, InvalidSkill{URI: s.URI, Err: errors.New("skill listed more than once")})
			continue
		}
		kept = append(kept, s)
	}
	l.Skills = kept
	return l, nil
}

type skillsPage struct {
	complete
	Skills     []json.RawMessage `json:"skills"`
	NextCursor *string           `json:"nextCursor"`
	TTLMs      *int64            `json:"ttlMs"`
}

// GetSkill fetches the current entry of the skill whose SKILL.md is uri,
// listed or not: how a host confirms a skill URI it learnt elsewhere, or
// refreshes an entry that failed verification.
func (c *Client) GetSkill(ctx context.Context, uri string) (*Skill, error) {
	if ok, _ := c.SkillsSupported(); !ok {
		return nil, fmt.Errorf("%w: skills/get", ErrSkillsUnsupported)
	}
	p := &uriParams{URI: uri}
	r := c.request("skills/get", "", p)
	r.replay = true
	var res struct {
		complete
		Skill *json.RawMessage `json:"skill"`
	}
	if err := c.call(ctx, r, &res); err != nil {
		return nil, err
	}
	if err := res.check("skills/get"); err != nil {
		return nil, err
	}
	if res.Skill == nil {
		return nil, fmt.Errorf("%w: skills/get: no skill in the result", ErrProtocol)
	}
	var s Skill
	if err := json.Unmarshal(*res.Skill, &s); err != nil {
		return nil, fmt.Errorf("%w: skills/get: %w", ErrProtocol, err)
	}
	if s.URI != uri {
		return nil, fmt.Errorf("%w: skills/get %q answered for %q", ErrProtocol, clip(uri, 120), clip(s.URI, 120))
	}
	return &s, nil
}

type uriParams struct {
	metaParams
	URI    string  `json:"uri"`
	Cursor *string `json:"cursor,omitempty"`
}

// ReadSkillDirectory lists the direct children of a directory of a
// skill (resources/directory/read, every page); subdirectories have the
// MIME type "inode/directory". The server must have declared
// directoryRead. A listing extends no manifest: a child the held entry
// does not list is still refused by ReadSkillFile.
func (c *Client) ReadSkillDirectory(ctx context.Context, uri string) ([]Resource, error) {
	if _, dir := c.SkillsSupported(); !dir {
		return nil, fmt.Errorf("%w: resources/directory/read needs directoryRead", ErrSkillsUnsupported)
	}
	return listPages(ctx, c, "resources/directory/read", func(cursor *string) paramsWithMeta { return &uriParams{URI: uri, Cursor: cursor} },
		func(p *directoryPage) ([]Resource, *string) { return p.Resources, p.NextCursor })
}

// directoryPage is a page of resources/directory/read.
type directoryPage struct {
	complete
	Resources  []Resource `json:"resources"`
	NextCursor *string    `json:"nextCursor"`
}

// watchesResources reports a host that wants resource list changes from a
// server that sends them.
func (c *Client) watchesResources(caps ServerCapabilities) bool {
	return c.opts.OnResourcesChanged != nil && caps.Resources != nil && caps.Resources.ListChanged
}
