package mcp

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// ToolResult is the answer of a Toolset call: the server's result, whole,
// and where it came from. It is plain data, safe for concurrent reads. (The
// agent's ToolResult is the event that reports a call of a run.)
type ToolResult struct {
	// Name is the tool's name in the Toolset, Server the server that ran
	// it.
	Name, Server string
	// Result is the result exactly as the server sent it.
	Result *CallToolResult
}

// IsError reports whether the tool reported an execution error, which the
// model should see.
func (r *ToolResult) IsError() bool { return r.Result.IsError }

// Text renders the result for a model that reads text only. Text blocks
// and the text of embedded resources are kept; an image, audio or blob is
// replaced by a placeholder naming its type, MIME type and decoded size,
// such as "[image image/png, 12.3 KiB omitted]"; a resource link becomes
// "[resource link: URI]". Blocks are joined with newlines. A result with no
// content but structured content gives that JSON.
func (r *ToolResult) Text() string {
	if len(r.Result.Content) == 0 {
		return string(r.Result.StructuredContent)
	}
	var b strings.Builder
	for i, c := range r.Result.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(contentText(&c))
	}
	return b.String()
}

// contentText is one content block as text.
func contentText(c *Content) string {
	switch c.Type {
	case "text":
		return c.Text
	case "image", "audio":
		return omitted(c.Type, c.MIMEType, c.Data)
	case "resource_link":
		return "[resource link: " + c.URI + "]"
	case "resource":
		switch {
		case c.Resource == nil:
			return "[empty resource omitted]"
		case c.Resource.Blob != "":
			return omitted("blob", c.Resource.MIMEType, c.Resource.Blob)
		default:
			return c.Resource.Text
		}
	}
	return fmt.Sprintf("[%q content omitted]", c.Type)
}

// omitted is the placeholder of binary data given in base64.
func omitted(kind, mimeType, data string) string {
	if mimeType == "" {
		mimeType = "of unknown type"
	}
	return fmt.Sprintf("[%s %s, %s omitted]", kind, mimeType, byteSize(decodedLen(data)))
}

// decodedLen is the size of base64 data once decoded, padded or not,
// without decoding it.
func decodedLen(s string) int {
	s = strings.TrimRight(s, "=")
	return base64.RawStdEncoding.DecodedLen(len(s))
}

// byteSize formats n bytes for people: B, KiB, MiB or GiB.
func byteSize(n int) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB"} {
		if f < unit {
			break
		}
		f, suffix = f/unit, s
	}
	return fmt.Sprintf("%.1f %s", f, suffix)
}
