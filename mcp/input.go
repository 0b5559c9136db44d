package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
)

// ElicitRequest is a server's request for input from the user, in form
// mode or, when the host sets Options.ElicitURL, in URL mode. The client
// answers a request in a mode it did not declare with an error (-32602 in
// the legacy era) without calling the handler.
type ElicitRequest struct {
	// Server is Options.ServerName: the server that asks, as the host
	// named it. It is not part of the message and the server cannot set
	// it; show it to the user.
	Server string `json:"-"`
	// Mode is "form" or "url" in every request a handler receives (an
	// absent mode means form).
	Mode string `json:"mode,omitempty"`
	// Message tells the user what is asked and why.
	Message string `json:"message"`
	// RequestedSchema is the flat object schema of a form, raw.
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	// URL, in URL mode, is the page the user is asked to open: an
	// absolute http or https URL with a host and no user info (the
	// client refuses any other). The SDK never fetches it; the host
	// shows it (its host first) and opens it only with the user's
	// consent, in a browser the model cannot read.
	URL string `json:"url,omitempty"`
	// ElicitationID, in URL mode of the 2025-11-25 era, identifies the
	// interaction: the server's notifications/elicitation/complete names
	// it (Options.OnElicitationComplete). Empty in the 2026-07-28 era.
	ElicitationID string `json:"elicitationId,omitempty"`
}

// ElicitResult is the user's answer: Action is "accept", "decline" or
// "cancel"; Content holds the form values of an accepted form. An accepted
// URL request means consent only (the user opened the page): its Content
// is dropped.
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

// maxURLLength bounds the URL of a URL-mode elicitation.
const maxURLLength = 8 << 10

// input fulfils one server request for input through the host's handlers.
// It returns ErrInputRequired when no handler is registered, and an error
// matching errInvalidRequest for a request the client did not declare or
// that is malformed.
func (c *Client) input(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "elicitation/create":
		if c.opts.Elicit == nil {
			return nil, fmt.Errorf("%w: elicitation", ErrInputRequired)
		}
		var req ElicitRequest
		if err := json.Unmarshal(params, &req); err != nil {
			return nil, fmt.Errorf("%w: elicitation params: %w", errInvalidRequest, err)
		}
		return c.elicit(ctx, &req)
	case "sampling/createMessage":
		return c.sample(ctx, params)
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

// elicit checks an elicitation request against the modes declared and
// passes it to the host's handler.
func (c *Client) elicit(ctx context.Context, req *ElicitRequest) (*ElicitResult, error) {
	if req.Mode == "" {
		req.Mode = "form"
	}
	switch {
	case req.Mode == "url" && c.opts.ElicitURL:
		if err := checkElicitURL(req.URL); err != nil {
			return nil, err
		}
		if c.era() == EraLegacy && req.ElicitationID == "" {
			return nil, fmt.Errorf("%w: url elicitation without elicitationId", errInvalidRequest)
		}
	case req.Mode != "form":
		return nil, fmt.Errorf("%w: elicitation mode %q not supported", errInvalidRequest, clip(req.Mode, 40))
	}
	req.Server = c.opts.ServerName
	res, err := c.opts.Elicit(ctx, req)
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = &ElicitResult{Action: "cancel"}
	}
	switch {
	case res.Action == "accept" && req.Mode == "url":
		res.Content = nil
	case res.Action == "accept":
		res.Content = withDefaults(req.RequestedSchema, res.Content)
	case res.Action != "decline" && res.Action != "cancel":
		return nil, fmt.Errorf("mcp: the elicitation handler answered action %q", clip(res.Action, 40))
	}
	return res, nil
}

// checkElicitURL refuses what a user could be misled by or a browser
// should not open: anything but an absolute http(s) URL with a host and no
// user info ("https://bank.example@evil.example/" reads as the bank).
func checkElicitURL(raw string) error {
	if len(raw) > maxURLLength {
		return fmt.Errorf("%w: elicitation url longer than %d bytes", errInvalidRequest, maxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: elicitation url: %w", errInvalidRequest, errors.Unwrap(err))
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return fmt.Errorf("%w: elicitation url must be http(s) with a host and no user info", errInvalidRequest)
	}
	return nil
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
