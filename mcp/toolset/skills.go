package toolset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/textclip"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// ErrUnknownSkill is returned for a skill name the Toolset does not offer.
var ErrUnknownSkill = errors.New("toolset: unknown skill")

// Kinds of Warning about skills.
const (
	// WarnInvalidSkill: a skill entry or a local skill folder is unusable
	// (invalid entry, no SKILL.md, over a limit, a symlink out of the
	// folder); it is left out.
	WarnInvalidSkill WarningKind = "invalid-skill"
	// WarnSkillNotFound: an allowlisted skill is not offered by the server.
	WarnSkillNotFound WarningKind = "skill-not-found"
	// WarnSkillsFailed: listing the server's skills failed; its previous
	// skills, if any, are kept.
	WarnSkillsFailed WarningKind = "skills-failed"
)

// Skill is one skill of a Toolset's skill catalogue.
type Skill struct {
	// Name is the skill's name in the Toolset: "{server}_{skill}" for a
	// server's skill (sanitised and unique like tool names), the skill's
	// own name for a local one. Skill names have no "_", so a local name
	// never equals a server's.
	Name string
	// Server is the server that serves it, or LocalServer.
	Server string
	// Skill is the entry the Toolset holds: every file read is verified
	// against it.
	Skill mcp.Skill
	// Egress is the server's configured egress (see Tool.Egress);
	// EgressAny for a local folder.
	Egress config.Egress
}

// serverSkills is the skills part of a tsServer.
type serverSkills struct {
	kick  chan struct{} // a skills refresh is due
	first skillListing  // the listing made on connect

	// Guarded by Toolset.mu.
	skills   []mcp.Skill
	warnings []Warning
	fresh    time.Time
}

type skillListing struct {
	skills   []mcp.Skill
	warnings []Warning
	fresh    time.Time
	err      error
}

// toolsetSkills is the skill catalogue of a Toolset. Guarded by
// Toolset.mu.
type toolsetSkills struct {
	local     []localSkill
	localWarn []Warning
	all       []Skill
	index     map[string]skillRoute
}

type skillRoute struct {
	srv   *tsServer // nil for a local skill
	local *localSkill
	pos   int
}

// skillsOn reports whether the host enabled MCP skills.
func (t *Toolset) skillsOn() bool { return t.opts.Client.Skills }

// listSkills lists a server's skills and applies its allowlist.
func (t *Toolset) listSkills(ctx context.Context, s *tsServer) skillListing {
	if ok, _ := s.client.SkillsSupported(); !t.skillsOn() || !ok {
		return skillListing{}
	}
	l, err := s.client.ListSkills(ctx)
	if err != nil {
		return skillListing{err: err}
	}
	out := skillListing{fresh: l.FreshUntil, warnings: s.cuts.take(s.cfg.Name, "skills/list")}
	for _, inv := range l.Invalid {
		out.warnings = append(out.warnings, Warning{Server: s.cfg.Name, Kind: WarnInvalidSkill,
			Message: fmt.Sprintf("skill %q left out: %v", textclip.Clip(inv.URI, 120), inv.Err)})
	}
	allow := s.cfg.Skills
	for _, sk := range l.Skills {
		if allow == nil || slices.Contains(allow, sk.Name()) {
			out.skills = append(out.skills, sk)
		}
	}
	for _, name := range allow {
		if !slices.ContainsFunc(l.Skills, func(sk mcp.Skill) bool { return sk.Name() == name }) {
			out.warnings = append(out.warnings, Warning{Server: s.cfg.Name, Kind: WarnSkillNotFound,
				Message: fmt.Sprintf("allowlisted skill %q is not offered by the server", name)})
		}
	}
	return out
}

// startSkills builds the first skill catalogue, from the skills of the
// local folders and the listings made on connect, and starts watching the
// servers' skills.
func (t *Toolset) startSkills(local []localSkill, warns []Warning) {
	t.mu.Lock()
	t.sk.local, t.sk.localWarn = local, warns
	for _, s := range t.servers {
		if s.client != nil {
			t.applySkills(s, s.sk.first)
		}
	}
	t.rebuildSkills()
	t.mu.Unlock()
	t.logNew(nil, warns)
	if !t.skillsOn() {
		return
	}
	for _, s := range t.servers {
		if s.client == nil {
			continue
		}
		if ok, _ := s.client.SkillsSupported(); ok {
			t.loops.Add(1)
			go t.watchSkills(s)
		}
	}
}

// applySkills makes a listing the server's skills, or records why it
// failed. t.mu is held.
func (t *Toolset) applySkills(s *tsServer, l skillListing) {
	if l.err != nil {
		w := Warning{Server: s.cfg.Name, Kind: WarnSkillsFailed, Message: "listing skills failed: " + l.err.Error()}
		t.logNew(s.sk.warnings, []Warning{w})
		s.sk.warnings = []Warning{w}
		return
	}
	t.logNew(s.sk.warnings, l.warnings)
	s.sk.skills, s.sk.warnings, s.sk.fresh = l.skills, l.warnings, l.fresh
	s.status.Skills = len(l.skills)
}

// rebuildSkills recomputes the catalogue: local skills first, then each
// server's, in configuration order. Two skills that would share a name
// both stay, the later one under a hashed name. t.mu is held.
func (t *Toolset) rebuildSkills() {
	t.sk.all = t.sk.all[:0]
	t.sk.index = map[string]skillRoute{}
	taken := func(n string) bool { _, ok := t.sk.index[n]; return ok }
	for i := range t.sk.local {
		ls := &t.sk.local[i]
		name := ls.skill.Name()
		if taken(name) {
			name = uniqueName("local", name, taken)
		}
		t.sk.index[name] = skillRoute{local: ls, pos: len(t.sk.all)}
		t.sk.all = append(t.sk.all, Skill{Name: name, Server: LocalServer, Skill: ls.skill, Egress: config.EgressAny})
	}
	for _, s := range t.servers {
		for _, sk := range s.sk.skills {
			name := uniqueName(s.cfg.Name, sk.Name(), taken)
			t.sk.index[name] = skillRoute{srv: s, pos: len(t.sk.all)}
			t.sk.all = append(t.sk.all, Skill{Name: name, Server: s.cfg.Name, Skill: sk, Egress: s.cfg.Egress})
		}
	}
}

// skillsDue asks the server's skills loop to list its skills again.
func (s *tsServer) skillsDue() {
	select {
	case s.sk.kick <- struct{}{}:
	default:
	}
}

// watchSkills lists a server's skills again each time it says its
// resources changed, or a read failed verification, until Close.
func (t *Toolset) watchSkills(s *tsServer) {
	t.follow(s, s.sk.kick, func() {
		ctx, cancel := context.WithTimeout(t.life, s.connectTimeout)
		l := t.listSkills(ctx, s)
		cancel()
		t.mu.Lock()
		if !t.closed && !s.removed() {
			t.applySkills(s, l)
			t.rebuildSkills()
		}
		t.mu.Unlock()
	})
}

// Skills returns the skill catalogue: local skills, then each server's in
// configuration order. Nothing is read to build it: only SKILL.md
// frontmatter from the servers' listings (and, for local folders, from
// disk). The slice is the caller's; the entries are shared and must not
// be modified. A server listing past its ttlMs is listed again in the
// background, as for Tools.
func (t *Toolset) Skills() []Skill {
	now := time.Now()
	t.mu.RLock()
	for _, s := range t.servers {
		if f := s.sk.fresh; !f.IsZero() && now.After(f) {
			s.skillsDue()
		}
	}
	defer t.mu.RUnlock()
	return append([]Skill(nil), t.sk.all...)
}

// Skill returns the skill with the Toolset name name.
func (t *Toolset) Skill(name string) (Skill, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	r, ok := t.sk.index[name]
	if !ok {
		return Skill{}, false
	}
	return t.sk.all[r.pos], true
}

// LoadSkill reads the SKILL.md of the skill the Toolset names name and
// verifies it (see ReadSkillFile). This is the only read that loads a
// skill; nothing is read before it.
func (t *Toolset) LoadSkill(ctx context.Context, name string) (*mcp.SkillContent, error) {
	return t.ReadSkillFile(ctx, name, "SKILL.md")
}

// ReadSkillFile reads one file of the skill the Toolset names name: ref is
// "SKILL.md" or a path relative to the skill's folder. The file is read
// when asked, never earlier, and verified against the entry the catalogue
// holds (Client.ReadSkillFile; a local file against the digest taken when
// its folder was scanned). A verification failure (ErrSkillVerification)
// hands on nothing and has the catalogue refreshed: the server's skills
// listed again, the local folders scanned again.
func (t *Toolset) ReadSkillFile(ctx context.Context, name, ref string) (*mcp.SkillContent, error) {
	t.mu.RLock()
	closed := t.closed
	r, ok := t.sk.index[name]
	var entry mcp.Skill
	if ok {
		entry = t.sk.all[r.pos].Skill
	}
	t.mu.RUnlock()
	switch {
	case closed:
		return nil, fmt.Errorf("toolset: skill %s: %w", name, mcp.ErrClosed)
	case !ok:
		return nil, fmt.Errorf("%w: %q", ErrUnknownSkill, name)
	}
	if r.local != nil {
		c, err := r.local.read(ref)
		if errors.Is(err, mcp.ErrSkillVerification) {
			t.rescanLocal(ctx)
		}
		return c, err
	}
	c, err := r.srv.client.ReadSkillFile(ctx, &entry, ref)
	if errors.Is(err, mcp.ErrSkillVerification) {
		r.srv.skillsDue()
	}
	if err != nil {
		return nil, fmt.Errorf("toolset: skill %s (server %q): %w", name, r.srv.cfg.Name, err)
	}
	return c, nil
}

// rescanLocal scans the local skill folders again; a scan stopped by ctx
// changes nothing.
func (t *Toolset) rescanLocal(ctx context.Context) {
	local, warns, err := scanSkillFolders(ctx, t.opts.SkillFolders)
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.logNew(t.sk.localWarn, warns)
	t.sk.local, t.sk.localWarn = local, warns
	t.rebuildSkills()
}

// skillWarnings are the current skill warnings, local ones first. t.mu
// is held.
func (t *Toolset) skillWarnings() []Warning {
	out := append([]Warning(nil), t.sk.localWarn...)
	for _, s := range t.servers {
		out = append(out, s.sk.warnings...)
	}
	return out
}
