package permission

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Request describes one tool call awaiting approval: the call itself
// (Arguments) and the tool's definition as its server last described it.
//
// The agent fills in everything but Changed. Title, Description, InputSchema
// and Annotations together form the tool's definition, which the [Policy]
// remembers when it allows a call and compares on later calls (see Changed).
//
// Every string and byte slice here comes from an MCP server or from the
// model, so a UI must treat it as untrusted text: [Terminal] escapes control
// characters before printing. Its JSON form (snake_case names) is what an
// agent.State stores for a call awaiting a deferred decision.
type Request struct {
	// Server is the name of the MCP server, as configured.
	Server string `json:"server"`
	// Tool is the tool's name on its server.
	Tool string `json:"tool"`
	// PrefixedName is the name the model knows the tool by ("{server}_{tool}").
	PrefixedName string `json:"prefixed_name,omitempty"`
	// Title is the tool's human-readable title, if it has one (the tool's
	// title, or else its annotations' title).
	Title string `json:"title,omitempty"`
	// Description is the tool's description.
	Description string `json:"description,omitempty"`
	// InputSchema is the tool's JSON Schema for its arguments.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// Arguments are the arguments the model passed, as raw JSON.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Caller says who asks for the call when it is not the model: an MCP
	// App's view names itself "app " followed by its ui:// URI (package
	// mcp/apps). An Approver should show it; empty for the model's calls.
	Caller string `json:"caller,omitempty"`
	// Annotations are the tool's hints (read-only, destructive, ...).
	Annotations Annotations `json:"annotations"`
	// Changed reports that the tool's definition is not the one that was in
	// force when a call of this tool was last allowed in this session: the
	// server changed its description, schema, title or hints since. Such a
	// change can turn a harmless tool into a harmful one after it was
	// approved, so the Policy asks again (see WithConfirmChanged).
	//
	// Policy.Check sets Changed itself before asking the Approver, by
	// comparing definitions; a true value set by the caller is kept.
	Changed bool `json:"changed,omitempty"`
	// Sampling, when set, makes this a question about a server's request
	// for a completion by the host's model, not about a tool call: Tool
	// is then SamplingTool, and only Server and Sampling matter (see
	// Sampling).
	Sampling *Sampling `json:"sampling,omitempty"`
}

// name returns the name used in errors: the prefixed name when there is one.
func (r *Request) name() string {
	if r.PrefixedName != "" {
		return r.PrefixedName
	}
	return r.Server + "/" + r.Tool
}

// ArgumentsText renders the arguments for a person: valid JSON indented by
// two spaces, anything else as it came. Empty arguments render as "{}".
//
// When max > 0 and the text is longer than max bytes, it is shortened to
// about max bytes. Its longest lines are cut first, all to the same length,
// the largest that lets the text fit; shorter lines are kept whole. In
// indented JSON a string value is one line, so one long value (a file's
// content, say) does not hide the short arguments around it (its path). If
// cutting lines is not enough, the whole text is then cut at max bytes. Each
// cut falls on a UTF-8 character boundary and ends with a note saying how
// many bytes it left out, so the result may exceed max by one such note.
// max <= 0 means no limit. The text is not escaped: string values may hold
// characters, such as bidirectional controls, that a UI should neutralise.
func (r Request) ArgumentsText(max int) string {
	text := "{}"
	if raw := bytes.TrimSpace(r.Arguments); len(raw) > 0 {
		var b bytes.Buffer
		if json.Indent(&b, raw, "", "  ") == nil {
			text = b.String()
		} else {
			text = string(raw)
		}
	}
	if max <= 0 || len(text) <= max {
		return text
	}
	return truncate(shortenLines(text, max), max)
}

// shortenLines cuts the lines of text longer than a limit, the largest limit
// under which the text fits in budget bytes; it returns text unchanged if no
// limit does.
func shortenLines(text string, budget int) string {
	lines := strings.Split(text, "\n")
	longest := 0
	for _, line := range lines {
		longest = max(longest, len(line))
	}
	size := func(limit int) int { // of the text once its lines are cut to limit
		n := len(lines) - 1
		for _, line := range lines {
			if len(line) <= limit {
				n += len(line)
			} else {
				n += limit + len(cutNote(len(line)-limit))
			}
		}
		return n
	}
	// size is not monotonic (cutting a line adds a note), but binary search
	// still ends on a limit that fits next to one that does not.
	limit := sort.Search(longest+1, func(limit int) bool { return size(limit) > budget }) - 1
	if limit <= 0 {
		return text
	}
	for i, line := range lines {
		lines[i] = truncate(line, limit)
	}
	return strings.Join(lines, "\n")
}

// truncate cuts s to at most n bytes on a character boundary and says how
// much it cut; n <= 0 means no limit.
func truncate(s string, n int) string {
	if n <= 0 || len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + cutNote(len(s)-cut)
}

// cutNote is appended where n bytes were cut.
func cutNote(n int) string {
	return " … [" + strconv.Itoa(n) + " more bytes]"
}
