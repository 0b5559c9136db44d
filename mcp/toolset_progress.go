package mcp

import "sync"

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
	// Server is the server's name in the configuration.
	Server string
	// Stage is the step the server has reached.
	Stage DiscoverStage
	// Era and ProtocolVersion are set from DiscoverListing on.
	Era             Era
	ProtocolVersion string
	// Tools and Warnings count the server's usable tools and what was
	// worked around in its listing, at DiscoverReady.
	Tools, Warnings int
	// Err is why the server was skipped, at DiscoverSkipped.
	Err error
}

// progressReporter calls ToolsetOptions.OnDiscover one report at a time,
// or does nothing when it is nil.
type progressReporter struct {
	mu sync.Mutex
	on func(DiscoverProgress)
}

func (r *progressReporter) report(p DiscoverProgress) {
	if r.on == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on(p)
}

// connected reports that s is connected over c, its tools being listed.
func (r *progressReporter) connected(s *tsServer, c *Client) {
	r.report(DiscoverProgress{Server: s.cfg.Name, Stage: DiscoverListing, Era: c.Era(), ProtocolVersion: c.ProtocolVersion()})
}

// done reports the end of s's discovery: l, listed over c, or why not.
func (r *progressReporter) done(s *tsServer, c *Client, l listing) {
	p := DiscoverProgress{Server: s.cfg.Name, Stage: DiscoverSkipped, Err: l.err}
	if l.err == nil {
		p = DiscoverProgress{Server: s.cfg.Name, Stage: DiscoverReady, Era: c.Era(), ProtocolVersion: c.ProtocolVersion(),
			Tools: len(l.tools), Warnings: len(l.warnings)}
	}
	r.report(p)
}
