package permission

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Elicitation is a server's request for input from the user (MCP
// elicitation), in form mode (a flat object Schema to fill in) or in URL
// mode (a page to open). Every string comes from the server and is
// untrusted text.
type Elicitation struct {
	// Server is the name of the server that asks, as configured.
	Server string `json:"server"`
	// Mode is "form" or "url".
	Mode string `json:"mode"`
	// Message says what is asked and why.
	Message string `json:"message"`
	// Schema is the form's flat object schema (form mode).
	Schema json.RawMessage `json:"schema,omitempty"`
	// URL is the page to open (URL mode).
	URL string `json:"url,omitempty"`
}

// ElicitAnswer is the user's answer: Action "accept" (the form filled
// in, or consent to open the URL), "decline" or "cancel"; Content holds
// an accepted form's values.
type ElicitAnswer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// maxFormFields bounds the fields of a form a Terminal fills in.
const maxFormFields = 50

// Elicit asks the person at the terminal for what e asks, one question
// at a time (it waits its turn with the approval questions).
//
// A form is offered first (fill in, decline, cancel), then filled in
// field by field in the schema's order: each field shows its title,
// description, type, choices and default; an empty line takes the
// default, or leaves an optional field out; the value is checked against
// the field's type (string formats email, uri, date and date-time,
// number and integer bounds, booleans as y/n, a choice by its number or
// value, several choices separated by commas) and asked again when it
// does not fit. The values are shown before they are sent.
//
// A URL is shown with the server's message, its host first and in
// capitals, with a warning for an internationalised (punycode) name;
// the user consents ("o": they open it themselves in their browser),
// declines or cancels. The Terminal never opens nor fetches it.
//
// The end of the input cancels; ctx ending returns ctx.Err().
func (t *Terminal) Elicit(ctx context.Context, e Elicitation) (ElicitAnswer, error) {
	release, err := t.hold(ctx)
	if err != nil {
		return ElicitAnswer{}, err
	}
	defer release()
	var ans ElicitAnswer
	if e.Mode == "url" {
		ans, err = t.elicitURL(ctx, e)
	} else {
		ans, err = t.elicitForm(ctx, e)
	}
	if errors.Is(err, io.EOF) {
		t.note("\n(no answer: input closed; cancelled)\n")
		return ElicitAnswer{Action: "cancel"}, nil
	}
	return ans, err
}

// elicitURL asks for consent to open e.URL.
func (t *Terminal) elicitURL(ctx context.Context, e Elicitation) (ElicitAnswer, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nServer %s asks you to open a web page\n", printable(e.Server, false))
	fmt.Fprintf(&b, "  message: %s\n", indentLines(printable(truncate(e.Message, terminalDescriptionLimit), true), "    "))
	host, warn := urlHost(e.URL)
	fmt.Fprintf(&b, "  site:    %s\n", host)
	if warn != "" {
		fmt.Fprintf(&b, "  WARNING: %s\n", warn)
	}
	fmt.Fprintf(&b, "  url:     %s\n", printable(e.URL, false))
	b.WriteString("It is not opened for you: open it yourself, in your browser, if you trust the site.\n")
	b.WriteString("o: I open it | n: decline | c: cancel\n> ")
	action, err := t.pick(ctx, b.String(), "Please answer o, n or c.\n> ", map[string]string{
		"o": "accept", "open": "accept", "y": "accept", "yes": "accept", "n": "decline", "no": "decline", "c": "cancel", "cancel": "cancel"})
	return ElicitAnswer{Action: action}, err
}

// yesNoCancel are the answers to a form's questions.
var yesNoCancel = map[string]string{"y": "accept", "yes": "accept", "n": "decline", "no": "decline", "c": "cancel", "cancel": "cancel"}

// pick asks prompt, then again until the line is one of the words of
// choices (case aside), and returns the word's value.
func (t *Terminal) pick(ctx context.Context, prompt, again string, choices map[string]string) (string, error) {
	for {
		line, err := t.ask(ctx, prompt)
		if err != nil {
			return "", err
		}
		if v, ok := choices[strings.ToLower(line)]; ok {
			return v, nil
		}
		prompt = again
	}
}

// urlHost returns the host of raw, upper-cased for prominence, and a
// warning when the name is internationalised or the URL does not parse.
func urlHost(raw string) (host, warning string) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "(none)", "the URL does not parse; do not open it"
	}
	h := u.Hostname()
	for _, label := range strings.Split(h, ".") {
		if strings.HasPrefix(strings.ToLower(label), "xn--") {
			warning = "the site's name uses international characters (punycode): it may imitate another"
		}
	}
	for _, r := range h {
		if r > 0x7e {
			warning = "the site's name uses international characters: it may imitate another"
		}
	}
	if u.Scheme != "https" {
		warning = strings.TrimPrefix(warning+"; ", "; ") + "the connection is not encrypted (" + printable(u.Scheme, false) + ")"
	}
	return printable(strings.ToUpper(h), false), warning
}

// formField is one property of a form schema.
type formField struct {
	name     string
	required bool
	Type     string          `json:"type"`
	Title    string          `json:"title"`
	Desc     string          `json:"description"`
	Format   string          `json:"format"`
	Default  json.RawMessage `json:"default"`
	Enum     []string        `json:"enum"`
	Names    []string        `json:"enumNames"`
	OneOf    []choice        `json:"oneOf"`
	Min      *float64        `json:"minimum"`
	Max      *float64        `json:"maximum"`
	MinLen   *int            `json:"minLength"`
	MaxLen   *int            `json:"maxLength"`
	MinItems *int            `json:"minItems"`
	MaxItems *int            `json:"maxItems"`
	Items    *struct {
		Enum  []string `json:"enum"`
		AnyOf []choice `json:"anyOf"`
	} `json:"items"`
}

// choice is one titled value of an enum.
type choice struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

// formFields reads the properties of a form schema, in their order.
func formFields(schema json.RawMessage) ([]formField, error) {
	var top struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, fmt.Errorf("permission: form schema: %w", err)
	}
	if len(top.Properties) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(top.Properties))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("permission: form schema: properties is not an object")
	}
	var fields []formField
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("permission: form schema: %w", err)
		}
		f := formField{name: tok.(string)}
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("permission: form schema: field %q: %w", printable(f.name, false), err)
		}
		for _, r := range top.Required {
			f.required = f.required || r == f.name
		}
		if len(fields) == maxFormFields {
			return nil, fmt.Errorf("permission: form schema has more than %d fields", maxFormFields)
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// choices returns a field's choices as (value, label) pairs.
func (f *formField) choices() []choice {
	switch {
	case len(f.OneOf) > 0:
		return f.OneOf
	case f.Items != nil && len(f.Items.AnyOf) > 0:
		return f.Items.AnyOf
	}
	values := f.Enum
	if f.Items != nil {
		values = f.Items.Enum
	}
	out := make([]choice, len(values))
	for i, v := range values {
		out[i] = choice{Const: v, Title: v}
		if i < len(f.Names) {
			out[i].Title = f.Names[i]
		}
	}
	return out
}

// elicitForm fills in a form field by field.
func (t *Terminal) elicitForm(ctx context.Context, e Elicitation) (ElicitAnswer, error) {
	fields, err := formFields(e.Schema)
	if err != nil {
		t.note("\n(" + printable(err.Error(), false) + "; declined)\n")
		return ElicitAnswer{Action: "decline"}, nil
	}
	prompt := fmt.Sprintf("\nServer %s asks you for information\n  message: %s\nFill in the form? y: yes | n: decline | c: cancel\n> ",
		printable(e.Server, false), indentLines(printable(truncate(e.Message, terminalDescriptionLimit), true), "    "))
	action, err := t.pick(ctx, prompt, "Please answer y, n or c.\n> ", yesNoCancel)
	if err != nil || action != "accept" {
		return ElicitAnswer{Action: action}, err
	}
	content := map[string]any{}
	for i := range fields {
		v, set, err := t.askField(ctx, &fields[i])
		if err != nil {
			return ElicitAnswer{}, err
		}
		if set {
			content[fields[i].name] = v
		}
	}
	shown, _ := json.MarshalIndent(content, "    ", "  ")
	prompt = "  values:\n    " + printable(string(shown), true) + "\nSend? y: send | n: decline | c: cancel\n> "
	action, err = t.pick(ctx, prompt, "Please answer y, n or c.\n> ", yesNoCancel)
	if err != nil || action != "accept" {
		return ElicitAnswer{Action: action}, err
	}
	return ElicitAnswer{Action: "accept", Content: content}, nil
}

// askField asks for one field until the answer fits; set is false for an
// optional field left empty without a default.
func (t *Terminal) askField(ctx context.Context, f *formField) (v any, set bool, err error) {
	var b strings.Builder
	label := f.name
	if f.Title != "" {
		label = f.Title + " (" + f.name + ")"
	}
	kind := f.Type
	if f.Format != "" {
		kind += ", " + f.Format
	}
	if f.required {
		kind += ", required"
	}
	fmt.Fprintf(&b, "  %s [%s]\n", printable(label, false), printable(kind, false))
	if f.Desc != "" {
		fmt.Fprintf(&b, "    %s\n", indentLines(printable(truncate(f.Desc, terminalDescriptionLimit), true), "    "))
	}
	choices := f.choices()
	for i, c := range choices {
		fmt.Fprintf(&b, "    %d) %s\n", i+1, printable(c.Title, false))
	}
	if len(f.Default) > 0 {
		fmt.Fprintf(&b, "    default: %s (empty line)\n", printable(string(f.Default), false))
	}
	prompt := b.String() + "> "
	for {
		line, err := t.ask(ctx, prompt)
		if err != nil {
			return nil, false, err
		}
		if line == "" {
			switch {
			case len(f.Default) > 0:
				var d any
				if json.Unmarshal(f.Default, &d) == nil {
					return d, true, nil
				}
			case !f.required:
				return nil, false, nil
			}
			prompt = "  (required)\n> "
			continue
		}
		v, err := f.parse(line, choices)
		if err == nil {
			return v, true, nil
		}
		prompt = "  (" + printable(err.Error(), false) + ")\n> "
	}
}

// parse reads a field's value from the line typed.
func (f *formField) parse(line string, choices []choice) (any, error) {
	pick := func(s string) (string, error) {
		s = strings.TrimSpace(s)
		if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(choices) {
			return choices[n-1].Const, nil
		}
		for _, c := range choices {
			if c.Const == s {
				return s, nil
			}
		}
		return "", fmt.Errorf("choose a number from 1 to %d", len(choices))
	}
	switch {
	case f.Type == "array":
		var out []string
		for _, part := range strings.Split(line, ",") {
			v, err := pick(part)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		if f.MinItems != nil && len(out) < *f.MinItems || f.MaxItems != nil && len(out) > *f.MaxItems {
			return nil, errors.New("wrong number of choices")
		}
		return out, nil
	case len(choices) > 0:
		return pick(line)
	}
	switch f.Type {
	case "boolean":
		switch strings.ToLower(line) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, errors.New("answer y or n")
	case "number", "integer":
		n, err := strconv.ParseFloat(line, 64)
		if err != nil || f.Type == "integer" && n != float64(int64(n)) {
			return nil, errors.New("not a " + f.Type)
		}
		if f.Min != nil && n < *f.Min || f.Max != nil && n > *f.Max {
			return nil, errors.New("out of range")
		}
		if f.Type == "integer" {
			return int64(n), nil
		}
		return n, nil
	}
	if f.MinLen != nil && len([]rune(line)) < *f.MinLen || f.MaxLen != nil && len([]rune(line)) > *f.MaxLen {
		return nil, errors.New("wrong length")
	}
	var err error
	switch f.Format {
	case "email":
		_, err = mail.ParseAddress(line)
	case "uri":
		var u *url.URL
		if u, err = url.Parse(line); err == nil && !u.IsAbs() {
			err = errors.New("not an absolute uri")
		}
	case "date":
		_, err = time.Parse(time.DateOnly, line)
	case "date-time":
		_, err = time.Parse(time.RFC3339, line)
	}
	if err != nil {
		return nil, errors.New("not a valid " + f.Format)
	}
	return line, nil
}
