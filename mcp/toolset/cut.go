package toolset

import (
	"fmt"
	"sync"
)

// WarnListCut: the server lists more tools, prompts, resources, resource
// templates or skills than mcp.Options.MaxListItems (mcp.DefaultMaxListItems
// unless Options.Client sets it), or in pages larger than
// mcp.Options.MaxListBytes; the Toolset holds the first ones only.
const WarnListCut WarningKind = "list-cut"

// listCuts remembers the listings of a server that its client cut at
// mcp.Options.MaxListItems or MaxListBytes (told by
// mcp.Options.OnListCut), until the listing that caused them takes them
// as warnings. The zero value is ready to use.
type listCuts struct {
	mu     sync.Mutex
	limits map[string]int // method -> the bound it was cut at
}

// record notes that a listing of method was cut at limit items.
func (l *listCuts) record(method string, limit int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.limits == nil {
		l.limits = map[string]int{}
	}
	l.limits[method] = limit
}

// take returns a warning of server for each of methods cut since the last
// take, and forgets them.
func (l *listCuts) take(server string, methods ...string) []Warning {
	l.mu.Lock()
	defer l.mu.Unlock()
	var warns []Warning
	for _, m := range methods {
		if limit, ok := l.limits[m]; ok {
			delete(l.limits, m)
			warns = append(warns, Warning{Server: server, Kind: WarnListCut,
				Message: fmt.Sprintf("%s lists more than %d items; only the first %d are used", m, limit, limit)})
		}
	}
	return warns
}
