package toolset

import (
	"sync"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// DiscoverStage is a step of one server's discovery.
type DiscoverStage string

// Stages of DiscoverProgress, in the order a server goes through them;
// a server ends at DiscoverReady or DiscoverSkipped, once.
const (
	// DiscoverConnecting: the connection and the era detection begin.
	DiscoverConnecting DiscoverStage = "connecting"
	// DiscoverListing: connected; its tools are being listed.
	DiscoverListing DiscoverStage = "listing"
	// DiscoverReady: the server is in the Toolset, with Tools tools.
	DiscoverReady DiscoverStage = "ready"
	// DiscoverSkipped: the server is not used; Err says why.
	DiscoverSkipped DiscoverStage = "skipped"
)

// DiscoverProgress is one step of one server's discovery, reported as it
// happens, for a host that draws a live banner.
type DiscoverProgress struct {
	// Server is the server's name in the configuration, and Index its
	// position in the list given to Discover (two entries may share a
	// name: the second is skipped).
	Server string
	Index  int
	// Stage is the step the server has reached.
	Stage DiscoverStage
	// Era and ProtocolVersion are set from DiscoverListing on.
	Era             mcp.Era
	ProtocolVersion string
	// Tools and Warnings count the server's usable tools and what was
	// worked around in its listing, at DiscoverReady.
	Tools, Warnings int
	// Err is why the server was skipped, at DiscoverSkipped.
	Err error
}

// progressReporter calls Options.OnDiscover one report at a time,
// or does nothing when it is nil.
type progressReporter struct {
	mu sync.Mutex
	on func(DiscoverProgress)
}

// serverProgress reports the steps of the server at index in the list.
type serverProgress struct {
	r     *progressReporter
	index int
	name  string
}

func (r *progressReporter) server(index int, name string) serverProgress {
	return serverProgress{r: r, index: index, name: name}
}

// done reports the end of the server's discovery: ready with l, listed
// over c, or skipped for l.err; to the trace too, when traced is not nil.
func (p serverProgress) done(c *mcp.Client, l *listing, traced func(*DiscoverProgress)) {
	if traced != nil {
		d := p.progress(DiscoverReady, c, l)
		traced(&d)
	}
	p.report(DiscoverReady, c, l)
}

// report reports stage, with what c and l say when set; a listing that
// failed makes it DiscoverSkipped.
func (p serverProgress) report(stage DiscoverStage, c *mcp.Client, l *listing) {
	if p.r.on == nil {
		return
	}
	d := p.progress(stage, c, l)
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	p.r.on(d)
}

func (p serverProgress) progress(stage DiscoverStage, c *mcp.Client, l *listing) DiscoverProgress {
	d := DiscoverProgress{Server: p.name, Index: p.index, Stage: stage}
	if c != nil {
		d.Era, d.ProtocolVersion = c.Era(), c.ProtocolVersion()
	}
	if l != nil {
		d.Tools, d.Warnings, d.Err = len(l.tools), len(l.warnings), l.err
		if l.err != nil {
			d.Stage, d.Era, d.ProtocolVersion = DiscoverSkipped, "", ""
		}
	}
	return d
}
