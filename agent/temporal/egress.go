package temporal

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sort"

	"go.temporal.io/sdk/activity"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// This file keeps the output of local-only servers (egress: local) where
// the worker's configuration lets it go: to the worker's model only when
// that model is on the worker's machine, and into the history only when
// the host says the history is sealed.

// Catalogue is the result of the Catalog activity: what the worker
// offers, and the facts about the worker that the run's decisions rest on.
type Catalogue struct {
	// Tools are the worker's tools: its Funcs, then its ToolSource's.
	Tools []toolset.Tool `json:"tools"`
	// LocalModel is whether the worker's Model is on the worker's machine
	// (agent.Capabilities.Local): only then does the run offer the tools of
	// local-only servers to the model.
	LocalModel bool `json:"local_model,omitempty"`
}

// UnmarshalJSON also reads a bare list of tools, the Catalog activity's
// result before it returned a Catalogue, so that the histories of runs
// begun then still replay.
func (c *Catalogue) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		*c = Catalogue{}
		return json.Unmarshal(t, &c.Tools)
	}
	type plain Catalogue // without this method
	return json.Unmarshal(b, (*plain)(c))
}

// localModel reports whether the worker's Model is on this machine
// (agent.Capabilities.Local); a Model that does not say is taken to be
// hosted.
func (a *Activities) localModel() bool {
	return agent.CapabilitiesOf(a.Model).Local
}

// localServers returns the servers of the worker's ToolSource that are
// local-only.
func (a *Activities) localServers() map[string]bool {
	servers := map[string]bool{}
	if a.Tools != nil {
		for _, t := range a.Tools.Tools() {
			if t.Egress == config.EgressLocal {
				servers[t.Server] = true
			}
		}
	}
	return servers
}

// withheldNote replaces, for a model that is not on the worker's
// machine, the content of a message holding local-only content.
const withheldNote = "[This message is withheld: it holds content of local-only servers, and you do not run on the machine of this worker.]"

// forHostedModel returns req as a model that is not on the worker's
// machine may receive it, and how many messages it withheld: the content
// of every message labelled config.EgressLocal (or a tool message of a
// local-only server of this worker) replaced by withheldNote, the
// arguments of the calls those messages make or answer blanked, and no
// tool of a local-only server. The run's agent withholds the same when
// the Catalog said the model is hosted; this holds even when the
// workflow believed otherwise (another worker's catalogue), since where
// the model runs is this worker's fact.
func (a *Activities) forHostedModel(req *agent.ChatRequest) (*agent.ChatRequest, int) {
	servers := a.localServers()
	local := func(m agent.Message) bool {
		return m.Egress == config.EgressLocal || m.Role == agent.RoleTool && servers[m.Server]
	}
	answered := map[string]bool{} // the calls a withheld tool message answers
	for _, m := range req.Messages {
		if m.Role == agent.RoleTool && local(m) {
			answered[m.ToolCallID] = true
		}
	}
	out := *req
	out.Messages = make([]agent.Message, len(req.Messages))
	withheld := 0
	for i, m := range req.Messages {
		whole := local(m)
		if whole {
			withheld++
		}
		m.Parts = hostedParts(m, whole, answered)
		out.Messages[i] = m
	}
	if len(servers) > 0 {
		names := map[string]bool{}
		for _, t := range a.Tools.Tools() {
			if servers[t.Server] {
				names[t.Name] = true
			}
		}
		out.Tools = slices.DeleteFunc(slices.Clone(req.Tools), func(d agent.ToolDef) bool { return names[d.Name] })
	}
	return &out, withheld
}

// hostedParts returns m's parts as a hosted model may see them: when whole
// (m holds local-only content) its text, reasoning and results give way to
// withheldNote, and the arguments of its calls, and of the calls a
// withheld tool message answers, are blanked, their provider metadata
// dropped. The parts are copied only
// when something changes.
func hostedParts(m agent.Message, whole bool, answered map[string]bool) []agent.Part {
	changes := whole
	for _, p := range m.Parts {
		changes = changes || p.Kind == agent.PartToolCall && answered[p.ID]
	}
	if !changes {
		return m.Parts
	}
	parts := make([]agent.Part, 0, len(m.Parts)+1)
	if whole {
		note := agent.TextPart(withheldNote)
		if m.Role == agent.RoleTool {
			note = agent.ToolResultPart(withheldNote)
		}
		parts = append(parts, note)
	}
	for _, p := range m.Parts {
		switch {
		case p.Kind == agent.PartToolCall:
			if whole || answered[p.ID] {
				p.Arguments, p.Metadata = "{}", nil // a provider's metadata may quote them
			}
			parts = append(parts, p)
		case !whole:
			parts = append(parts, p)
		}
	}
	return parts
}

// catalogue returns the Catalogue: the tools of local-only servers only
// when SealedHistory says their output may enter the history.
func (a *Activities) catalogue(ctx context.Context) *Catalogue {
	cat := &Catalogue{LocalModel: a.localModel()}
	for _, f := range a.Funcs {
		cat.Tools = append(cat.Tools, funcTool(f))
	}
	if a.Tools == nil {
		return cat
	}
	left := map[string]bool{}
	for _, t := range a.Tools.Tools() {
		if t.Egress == config.EgressLocal && !a.SealedHistory {
			left[t.Server] = true
			continue
		}
		t.Task = mcp.TaskNever
		cat.Tools = append(cat.Tools, t)
	}
	if len(left) > 0 {
		servers := make([]string, 0, len(left))
		for s := range left {
			servers = append(servers, s)
		}
		sort.Strings(servers)
		activity.GetLogger(ctx).Warn("agent/temporal: the tools of local-only servers are not offered in durable runs: their output would be stored in clear in the history (see Activities.SealedHistory)",
			"servers", servers)
	}
	return cat
}
