package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// ErrSkillVerification matches every *SkillVerificationError.
var ErrSkillVerification = errors.New("mcp: skill verification failed")

// Reasons of a SkillVerificationError.
const (
	// SkillUnlisted: the file is not in the held entry's manifest.
	SkillUnlisted = "unlisted"
	// SkillSize: the bytes read are not as many as the manifest says.
	SkillSize = "size"
	// SkillDigest: the bytes read do not have the manifest's digest.
	SkillDigest = "digest"
	// SkillFrontmatter: the SKILL.md read has a frontmatter that is
	// missing, unreadable, or different from the entry's.
	SkillFrontmatter = "frontmatter"
	// SkillTooLarge: the file, or the skill, is over a limit.
	SkillTooLarge = "too-large"
)

// SkillVerificationError says why the content of a skill file was
// refused. The content itself is never handed on; it is not in the error
// either.
type SkillVerificationError struct {
	// URI is the file's URI.
	URI string
	// Reason is one of SkillUnlisted, SkillSize, SkillDigest,
	// SkillFrontmatter and SkillTooLarge.
	Reason string
	// Differences lists, for SkillFrontmatter, each field that differs
	// ("description: entry \"a\", file \"b\""), clipped.
	Differences []string
}

func (e *SkillVerificationError) Error() string {
	msg := fmt.Sprintf("mcp: skill file %q refused: %s", clip(e.URI, 200), e.Reason)
	if len(e.Differences) > 0 {
		msg += " (" + strings.Join(e.Differences, "; ") + ")"
	}
	return msg
}

// Is makes errors.Is(err, ErrSkillVerification) true.
func (e *SkillVerificationError) Is(target error) bool { return target == ErrSkillVerification }

// SkillContent is a verified skill file.
type SkillContent struct {
	// URI is the file's URI, as the manifest spells it.
	URI string
	// MIMEType is the server's media type for it, if any.
	MIMEType string
	// Data is the file's bytes.
	Data []byte
	// Verified is true when size and digest were checked against the
	// manifest; false for a dynamic skill (whose SKILL.md frontmatter is
	// still checked).
	Verified bool
}

// Body is the text after the frontmatter of a SKILL.md (the whole text of
// any other file).
func (c *SkillContent) Body() string {
	if _, body, err := splitFrontmatter(c.Data); err == nil {
		return body
	}
	return string(c.Data)
}

// ReadSkillFile reads one file of skill s, with resources/read, and
// verifies it against s: ref is "SKILL.md", a path relative to the
// skill's folder ("references/FORMS.md"), or a URI inside it. The file must
// be in the manifest (unless the skill is dynamic); its size and digest
// must match; a SKILL.md's frontmatter must equal the entry's field by
// field. Anything else is a *SkillVerificationError and the content is
// dropped. Nothing is read before the checks that need no content pass.
//
// A failure that says the entry is stale (unlisted, size, digest,
// frontmatter) is recovered from by getting the entry again (GetSkill or
// ListSkills) and deciding anew whether to load it.
func (c *Client) ReadSkillFile(ctx context.Context, s *Skill, ref string) (*SkillContent, error) {
	if ok, _ := c.SkillsSupported(); !ok {
		return nil, fmt.Errorf("%w: reading a skill file", ErrSkillsUnsupported)
	}
	return s.ReadVerified(ref, func(uri, _ string, _ int64) ([]byte, string, error) {
		res, err := c.ReadResource(ctx, uri)
		if err != nil {
			return nil, "", fmt.Errorf("mcp: skill %q: reading %q: %w", s.name, clip(uri, 200), err)
		}
		data, mime, err := contentOf(res, uri)
		if err != nil {
			return nil, "", fmt.Errorf("mcp: skill %q: reading %q: %w", s.name, clip(uri, 200), err)
		}
		return data, mime, nil
	})
}

// ReadVerified reads one file of s with read and verifies it as
// ReadSkillFile does, for a host that reads a skill's files itself (from
// a folder on disk, a cache): ref is resolved and checked against the
// manifest before read is called; read gets the file's URI as the
// manifest spells it, its clean path relative to the skill's folder, and
// the most bytes it may return (the manifest's size, or MaxSkillSize for
// a dynamic skill), and returns the bytes and their media type. An error
// of read is returned as it is; bytes that do not match the manifest are
// a *SkillVerificationError and are dropped.
func (s *Skill) ReadVerified(ref string, read func(uri, path string, max int64) ([]byte, string, error)) (*SkillContent, error) {
	uri, want, err := s.resolve(ref)
	if err != nil {
		return nil, err
	}
	path, err := relativeRef(s.Root(), uri)
	if err != nil {
		return nil, fmt.Errorf("mcp: skill %q: file %q: %w", s.name, clip(uri, 200), err)
	}
	limit := int64(MaxSkillSize)
	if want != nil {
		limit = want.Size
	}
	data, mime, err := read(uri, path, limit)
	if err != nil {
		return nil, err
	}
	if err := s.verify(uri, want, data); err != nil {
		return nil, err
	}
	return &SkillContent{URI: uri, MIMEType: mime, Data: data, Verified: want != nil}, nil
}

// resolve turns ref into the URI to request and its manifest entry (nil
// for a dynamic skill), refusing before any read what cannot be verified.
func (s *Skill) resolve(ref string) (string, *SkillFile, error) {
	root := s.Root()
	rel, err := relativeRef(root, ref)
	if err != nil {
		return "", nil, fmt.Errorf("mcp: skill %q: file %q: %w", s.name, clip(ref, 200), err)
	}
	if s.Dynamic {
		return root + "/" + rel, nil, nil
	}
	for i := range s.Files {
		if r, err := relativeRef(root, s.Files[i].URI); err == nil && r == rel {
			f := &s.Files[i]
			if f.Size > MaxSkillSize {
				return "", nil, &SkillVerificationError{URI: f.URI, Reason: SkillTooLarge}
			}
			return f.URI, f, nil // the manifest's own spelling
		}
	}
	return "", nil, &SkillVerificationError{URI: root + "/" + rel, Reason: SkillUnlisted}
}

// verify checks data read from uri against the manifest entry want (nil
// when dynamic) and, for the skill's SKILL.md, its frontmatter.
func (s *Skill) verify(uri string, want *SkillFile, data []byte) error {
	switch {
	case want == nil && len(data) > MaxSkillSize:
		return &SkillVerificationError{URI: uri, Reason: SkillTooLarge}
	case want != nil && int64(len(data)) != want.Size:
		return &SkillVerificationError{URI: uri, Reason: SkillSize}
	case want != nil && FileDigest(data) != want.Digest:
		return &SkillVerificationError{URI: uri, Reason: SkillDigest}
	}
	if rel, _ := relativeRef(s.Root(), uri); rel == "SKILL.md" {
		if diffs := compareFrontmatter(s.Frontmatter, data); len(diffs) > 0 {
			return &SkillVerificationError{URI: uri, Reason: SkillFrontmatter, Differences: diffs}
		}
	}
	return nil
}

// FileDigest is the manifest digest of data: "sha256:" and the hex of
// its SHA-256, the form SkillFile.Digest takes.
func FileDigest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// contentOf picks the contents item of uri and returns its bytes: the
// UTF-8 of its text, or its decoded blob.
func contentOf(res *ReadResourceResult, uri string) ([]byte, string, error) {
	key := uriKey(uri)
	for _, c := range res.Contents {
		if uriKey(c.URI) != key {
			continue
		}
		if c.Blob != "" {
			b, err := base64.StdEncoding.DecodeString(c.Blob)
			if err != nil {
				return nil, "", fmt.Errorf("%w: blob is not base64: %w", ErrProtocol, err)
			}
			return b, c.MIMEType, nil
		}
		return []byte(c.Text), c.MIMEType, nil
	}
	return nil, "", fmt.Errorf("%w: the result has no contents for the file", ErrProtocol)
}

// uriKey normalises a URI for comparison: percent-escapes decoded where
// they decode.
func uriKey(u string) string {
	if d, err := url.PathUnescape(u); err == nil {
		return d
	}
	return u
}

// relativeRef returns ref as a clean path relative to root: ref is a path
// relative to root or a URI under root. A path that could leave the
// folder (an empty, "." or ".." segment, a backslash, a NUL, an escaped
// "/"), or that has a query or a fragment, is refused.
func relativeRef(root, ref string) (string, error) {
	rel := ref
	if strings.Contains(ref, "://") {
		r, ok := strings.CutPrefix(uriKey(ref), uriKey(root)+"/")
		if !ok {
			return "", errors.New("outside the skill's folder")
		}
		rel = r
	} else {
		rel = uriKey(strings.TrimPrefix(ref, "./"))
	}
	if rel == "" || strings.ContainsAny(ref, "?#") || strings.ContainsAny(rel, "\\\x00") || !utf8.ValidString(rel) {
		return "", errors.New("not a file path inside the skill")
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", errors.New("path leaves the skill's folder or is not clean")
		}
	}
	if strings.Contains(strings.ToLower(ref), "%2f") {
		return "", errors.New("escaped slash in the path")
	}
	return rel, nil
}
