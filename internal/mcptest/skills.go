package mcptest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
)

// Skill is a skill a Server serves, under skill://{Path}/.
type Skill struct {
	// Path is the skill's path; its last segment is the skill's name.
	Path string
	// Files maps the paths of the skill's files, relative to its folder,
	// to their content; it must hold "SKILL.md".
	Files map[string]string
	// Dynamic lists the skill with resources "dynamic", no manifest.
	Dynamic bool
}

// Skills is the skills part of a Server (SEP-2640): skills/list (paged),
// skills/get, resources/read of the files and, with DirectoryRead,
// resources/directory/read. It counts every file read. Configure it
// before Start; SetSkills changes the skills while it runs.
type Skills struct {
	// List is the skills served, in order.
	List []Skill
	// PageSize > 0 pages skills/list.
	PageSize int
	// DirectoryRead declares and serves resources/directory/read.
	DirectoryRead bool
	// Serve, when set, gives the text served for a file in place of its
	// content: a server whose files no longer match their entry.
	Serve func(uri, content string) string
	// Entry, when set, edits each entry before it is listed or got.
	Entry func(entry map[string]any)

	mu    sync.Mutex
	reads []string
}

// SetSkills replaces the skills served and tells the modern clients
// listening (notifications/resources/list_changed); it returns how many
// streams it reached.
func (s *Server) SetSkills(list []Skill) int {
	s.Skills.mu.Lock()
	s.Skills.List = list
	s.Skills.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.notifyListeners("notifications/resources/list_changed")
}

// Reads returns the URIs of the files read so far, in order.
func (k *Skills) Reads() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.reads...)
}

func (k *Skills) skills() []Skill {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.List
}

// capabilities are what the server declares.
func (s *Server) capabilities(modern bool) map[string]any {
	caps := map[string]any{"tools": map[string]any{"listChanged": true}}
	if s.Skills != nil {
		caps["resources"] = map[string]any{"listChanged": true}
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/skills": map[string]any{"directoryRead": s.Skills.DirectoryRead}}
	}
	if s.Catalog != nil {
		s.Catalog.capabilities(caps)
	}
	if s.Tasks != nil {
		s.Tasks.capabilities(caps, modern)
	}
	return caps
}

// handle answers the skills methods; ok is false for any other method.
func (k *Skills) handle(method string, params json.RawMessage) (res any, rerr *jsonrpc.Error, ok bool) {
	var p struct {
		URI    string  `json:"uri"`
		Cursor *string `json:"cursor"`
	}
	_ = json.Unmarshal(params, &p)
	switch method {
	case "skills/list":
		res, rerr = k.list(p.Cursor)
	case "skills/get":
		for _, sk := range k.skills() {
			if "skill://"+sk.Path+"/SKILL.md" == p.URI {
				return map[string]any{"skill": k.entry(sk), "ttlMs": 0, "cacheScope": "private"}, nil, true
			}
		}
		rerr = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown skill"}
	case "resources/read":
		k.mu.Lock()
		k.reads = append(k.reads, p.URI)
		k.mu.Unlock()
		res, rerr = k.read(p.URI)
	case "resources/directory/read":
		if !k.DirectoryRead {
			return nil, nil, false
		}
		res, rerr = k.directory(p.URI)
	default:
		return nil, nil, false
	}
	return res, rerr, true
}

func (k *Skills) list(cursor *string) (any, *jsonrpc.Error) {
	start := 0
	if cursor != nil {
		if _, err := fmt.Sscanf(*cursor, "s%d", &start); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad cursor"}
		}
	}
	list := k.skills()
	end := len(list)
	if k.PageSize > 0 && start+k.PageSize < end {
		end = start + k.PageSize
	}
	entries := make([]map[string]any, 0, end-start)
	for _, sk := range list[min(start, end):end] {
		entries = append(entries, k.entry(sk))
	}
	res := map[string]any{"skills": entries, "ttlMs": 0, "cacheScope": "private"}
	if end < len(list) {
		res["nextCursor"] = fmt.Sprintf("s%d", end)
	}
	return res, nil
}

// entry is the listing entry of a skill, with its manifest.
func (k *Skills) entry(sk Skill) map[string]any {
	root := "skill://" + sk.Path
	var fm map[string]any
	if front, _, ok := strings.Cut(strings.TrimPrefix(sk.Files["SKILL.md"], "---\n"), "\n---"); ok {
		_ = yaml.Unmarshal([]byte(front), &fm)
	}
	e := map[string]any{"uri": root + "/SKILL.md", "frontmatter": fm}
	if sk.Dynamic {
		e["resources"] = "dynamic"
	} else {
		files := make([]map[string]any, 0, len(sk.Files))
		for _, name := range sortedKeys(sk.Files) {
			sum := sha256.Sum256([]byte(sk.Files[name]))
			files = append(files, map[string]any{"uri": root + "/" + name, "digest": "sha256:" + hex.EncodeToString(sum[:]), "size": len(sk.Files[name])})
		}
		e["resources"] = files
	}
	if k.Entry != nil {
		k.Entry(e)
	}
	return e
}

func (k *Skills) read(uri string) (any, *jsonrpc.Error) {
	for _, sk := range k.skills() {
		name, ok := strings.CutPrefix(uri, "skill://"+sk.Path+"/")
		if !ok {
			continue
		}
		if content, ok := sk.Files[name]; ok {
			if k.Serve != nil {
				content = k.Serve(uri, content)
			}
			mime := "text/markdown"
			if !strings.HasSuffix(name, ".md") {
				mime = "text/plain"
			}
			return map[string]any{"contents": []map[string]any{{"uri": uri, "mimeType": mime, "text": content}}}, nil
		}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "resource not found"}
}

// directory lists the direct children of a skill folder.
func (k *Skills) directory(uri string) (any, *jsonrpc.Error) {
	for _, sk := range k.skills() {
		root := "skill://" + sk.Path
		if uri != root && !strings.HasPrefix(uri, root+"/") {
			continue
		}
		dir := strings.TrimPrefix(strings.TrimPrefix(uri, root), "/")
		seen := map[string]bool{}
		children := []map[string]any{}
		for _, name := range sortedKeys(sk.Files) {
			rest, ok := strings.CutPrefix(name, dir+"/")
			if dir == "" {
				rest, ok = name, true
			}
			if !ok {
				continue
			}
			first, _, sub := strings.Cut(rest, "/")
			child := uri + "/" + first
			if seen[child] {
				continue
			}
			seen[child] = true
			c := map[string]any{"uri": child, "name": first}
			if sub {
				c["mimeType"] = "inode/directory"
			}
			children = append(children, c)
		}
		if len(children) > 0 {
			return map[string]any{"resources": children}, nil
		}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "not a directory"}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
