package agent

import (
	"maps"
	"slices"
	"sync"

	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// loadout is what a run has loaded beside its catalogue: the skills
// loaded, whose files may then be read, the bytes of skill files read,
// and the tools ToolSearchTool loaded. Calls of one turn run at once, so
// it is safe for concurrent use; offered, the skills of this turn's
// catalogue, is set and read by the run's goroutine alone.
type loadout struct {
	offered []toolset.Skill

	mu         sync.Mutex
	skills     map[string]bool
	tools      map[string]bool
	skillBytes int64
}

// newLoadout returns the loadout of a run resumed from st; nil starts
// with nothing loaded.
func newLoadout(st *State) *loadout {
	l := &loadout{skills: map[string]bool{}, tools: map[string]bool{}}
	if st != nil {
		for _, name := range st.LoadedTools {
			l.tools[name] = true
		}
		for _, name := range st.LoadedSkills {
			l.skills[name] = true
		}
		l.skillBytes = st.SkillBytes
	}
	return l
}

// save records l in st.
func (l *loadout) save(st *State) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st.LoadedTools, st.LoadedSkills = slices.Sorted(maps.Keys(l.tools)), slices.Sorted(maps.Keys(l.skills))
	st.SkillBytes = l.skillBytes
}

// skillLoaded reports whether the skill name was loaded.
func (l *loadout) skillLoaded(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.skills[name]
}

// loadSkill records the skill name as loaded.
func (l *loadout) loadSkill(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.skills[name] = true
}

// toolLoaded reports whether ToolSearchTool loaded the tool name.
func (l *loadout) toolLoaded(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tools[name]
}

// toolCount returns how many tools ToolSearchTool loaded.
func (l *loadout) toolCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.tools)
}

// loadTool records the tool name as loaded.
func (l *loadout) loadTool(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tools[name] = true
}

// skillBytesRead returns the bytes of skill files read so far.
func (l *loadout) skillBytesRead() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.skillBytes
}

// readSkillBytes adds n to the bytes of skill files read, and returns the
// new total.
func (l *loadout) readSkillBytes(n int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.skillBytes += n
	return l.skillBytes
}
