package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/mcp/apps"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// maxDescription bounds the part of a tool's description an approval card
// shows: the server's text, untrusted.
const maxDescription = 600

// about is what the page shows when it loads: the model, and the servers
// with the tools offered to it.
type about struct {
	Model   string
	Servers []aboutServer
}

// aboutServer is one configured server on the page.
type aboutServer struct {
	Name string
	// Err says why the server was skipped; "" when it is connected.
	Err string
	// Tools names the tools the model is offered, by their names on the
	// server, joined by ", "; Count counts them.
	Tools string
	Count int
}

// describe says what the page shows of the model and the servers.
func describe(m agent.Model, ts *toolset.Toolset) about {
	var a about
	switch m := m.(type) {
	case noModel:
		a.Model = "none: ask a question to see how to start one"
	case agent.DescribedModel:
		info := m.ModelInfo() // never a URL's credentials or query
		a.Model = info.Name
		if info.Address != "" {
			a.Model += " at " + net.JoinHostPort(info.Address, strconv.Itoa(info.Port))
		}
	default:
		a.Model = fmt.Sprintf("%T", m)
	}
	tools := map[string][]string{}
	for _, t := range ts.Tools() {
		if apps.ForModel(t.Tool) {
			tools[t.Server] = append(tools[t.Server], t.Tool.Name)
		}
	}
	for _, s := range ts.Servers() {
		as := aboutServer{Name: s.Name, Tools: strings.Join(tools[s.Name], ", "), Count: len(tools[s.Name])}
		if s.Err != nil {
			as.Err = s.Err.Error()
		}
		a.Servers = append(a.Servers, as)
	}
	return a
}

// approval is what an approval card shows of a pending call: the tool,
// what its server says it does and of its effects, and the arguments.
func approval(id string, r permission.Request) map[string]any {
	desc := r.Description
	if len(desc) > maxDescription {
		desc = desc[:maxDescription] + "…"
	}
	return map[string]any{"id": id, "name": r.Tool, "title": r.Title, "server": r.Server, "description": desc,
		"hints": hints(r.Annotations), "arguments": r.ArgumentsText(400)}
}

// hints words a tool's annotations for the user, as its server states
// them.
func hints(a permission.Annotations) []string {
	var out []string
	say := func(hint *bool, yes, no string) {
		switch {
		case hint == nil:
		case *hint && yes != "":
			out = append(out, yes)
		case !*hint && no != "":
			out = append(out, no)
		}
	}
	say(a.ReadOnlyHint, "read-only", "may change things")
	if a.ReadOnlyHint == nil || !*a.ReadOnlyHint {
		say(a.DestructiveHint, "may delete or overwrite", "does not delete or overwrite")
		say(a.IdempotentHint, "the same call twice has no further effect", "")
	}
	say(a.OpenWorldHint, "reaches the outside world", "stays within its own system")
	if len(out) == 0 {
		out = append(out, "no hints: it may do anything")
	}
	return out
}
