package mcp

import (
	"context"
	"encoding/json"
	"fmt"
)

// ElicitRequest is a server's request for input from the user, in form
// mode: the client offers only that mode, and answers a request in any
// other mode with an error without calling the handler.
type ElicitRequest struct {
	// Mode is "form" (or empty, which means form) in every request a
	// handler receives.
	Mode string `json:"mode,omitempty"`
	// Message tells the user what is asked and why.
	Message string `json:"message"`
	// RequestedSchema is the flat object schema of a form, raw.
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
}

// ElicitResult is the user's answer: Action is "accept", "decline" or
// "cancel"; Content holds the form values of an accepted form.
type ElicitResult struct {
	// Action is "accept", "decline" or "cancel".
	Action string `json:"action"`
	// Content holds the form values when Action is "accept".
	Content map[string]any `json:"content,omitempty"`
}

// Root is a directory or file the user lets servers see (a file:// URI).
type Root struct {
	// URI locates the root; it must start with file://.
	URI string `json:"uri"`
	// Name is a display name for the root, if any.
	Name string `json:"name,omitempty"`
}

// errUnsupportedMode is an elicitation mode the client did not declare.
var errUnsupportedMode = fmt.Errorf("elicitation mode not supported")

// input fulfils one server request for input through the host's handlers.
// It returns ErrInputRequired when no handler is registered.
func (c *Client) input(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "elicitation/create":
		if c.opts.Elicit == nil {
			return nil, fmt.Errorf("%w: elicitation", ErrInputRequired)
		}
		var req ElicitRequest
		if err := json.Unmarshal(params, &req); err != nil {
			return nil, fmt.Errorf("%w: elicitation params: %w", ErrProtocol, err)
		}
		if req.Mode == "" {
			req.Mode = "form"
		}
		if req.Mode != "form" {
			return nil, fmt.Errorf("%w: %q", errUnsupportedMode, req.Mode)
		}
		res, err := c.opts.Elicit(ctx, &req)
		if err != nil {
			return nil, err
		}
		if res == nil {
			res = &ElicitResult{Action: "cancel"}
		}
		if res.Action == "accept" {
			res.Content = withDefaults(req.RequestedSchema, res.Content)
		}
		return res, nil
	case "roots/list":
		if c.opts.Roots == nil {
			return nil, fmt.Errorf("%w: roots", ErrInputRequired)
		}
		roots, err := c.opts.Roots(ctx)
		if err != nil {
			return nil, err
		}
		if roots == nil {
			roots = []Root{}
		}
		return struct {
			Roots []Root `json:"roots"`
		}{roots}, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrInputRequired, method)
}

// withDefaults fills the schema's default values into the fields an
// accepted form left out (SEP-1034).
func withDefaults(schema json.RawMessage, content map[string]any) map[string]any {
	var s struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return content
	}
	for name, prop := range s.Properties {
		if len(prop.Default) == 0 {
			continue
		}
		if _, ok := content[name]; ok {
			continue
		}
		if content == nil {
			content = map[string]any{}
		}
		content[name] = prop.Default
	}
	return content
}
