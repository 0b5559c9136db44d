package mcp

import (
	"context"
)

// MaxCompletionValues is the most values a completion holds, as the spec
// allows; a server's further values are dropped (and HasMore set).
const MaxCompletionValues = 100

// CompletionRef names what a completion is for: a prompt (Type
// "ref/prompt", Name) or a resource template (Type "ref/resource", URI the
// template).
type CompletionRef struct {
	// Type is "ref/prompt" or "ref/resource".
	Type string `json:"type"`
	// Name is the prompt's name on its server, for "ref/prompt".
	Name string `json:"name,omitempty"`
	// URI is the URI template, for "ref/resource".
	URI string `json:"uri,omitempty"`
}

// Completion is a server's suggestions for an argument's value.
type Completion struct {
	// Values are the suggestions, at most MaxCompletionValues.
	Values []string `json:"values"`
	// Total is how many suggestions the server has, when it says.
	Total *int `json:"total,omitempty"`
	// HasMore says there are suggestions beyond Values.
	HasMore bool `json:"hasMore,omitempty"`
}

// CompletionArgument is the argument whose values a completion suggests.
type CompletionArgument struct {
	// Name is the argument's (a prompt argument, a template variable).
	Name string
	// Value is what the user typed so far.
	Value string
	// Context holds the arguments already chosen, nil for none.
	Context map[string]string
}

// Complete asks the server for values of the argument arg of ref. It
// needs a server that declares completions.
func (c *Client) Complete(ctx context.Context, ref CompletionRef, arg CompletionArgument) (*Completion, error) {
	p := &completeParams{Ref: ref}
	p.Argument.Name, p.Argument.Value = arg.Name, arg.Value
	if len(arg.Context) > 0 {
		p.Context = &completeContext{Arguments: arg.Context}
	}
	r := c.request("completion/complete", ref.Name+ref.URI, p)
	r.replay = true
	var res completeResult
	if err := c.call(ctx, r, &res); err != nil {
		return nil, err
	}
	if err := res.check("completion/complete"); err != nil {
		return nil, err
	}
	out := &res.Completion
	if len(out.Values) > MaxCompletionValues {
		out.Values, out.HasMore = out.Values[:MaxCompletionValues], true
	}
	return out, nil
}

type completeParams struct {
	metaParams
	Ref      CompletionRef `json:"ref"`
	Argument struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"argument"`
	Context *completeContext `json:"context,omitempty"`
}

type completeContext struct {
	Arguments map[string]string `json:"arguments"`
}

type completeResult struct {
	complete
	Completion Completion `json:"completion"`
}
