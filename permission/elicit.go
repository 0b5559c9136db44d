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
	"slices"
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
// description, type, choices and default, each cut as a tool's
// description is (names, titles and choices at 200 bytes, the description
// and the default at 500), and its first 20 choices, saying how many
// more it has (any of them may still be typed); an empty line takes the
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
	host, warn := URLSite(e.URL)
	fmt.Fprintf(&b, "  site:    %s\n", strings.ToUpper(host))
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

// URLSite returns the host of raw, the site a URL elicitation leads to,
// in lower case and printable (control and bidirectional characters
// escaped), for a host to show prominently; and a warning when the name
// is internationalised (it may imitate another), the connection is not
// encrypted, or the URL does not parse (host "(none)").
func URLSite(raw string) (host, warning string) {
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
	return printable(strings.ToLower(h), false), warning
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
			return nil, fmt.Errorf("permission: form schema: field %q: %w", label(f.name), err)
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
	shown, _ := json.Marshal(content)
	values := Request{Arguments: shown}.ArgumentsText(terminalArgumentsLimit)
	prompt = "  values:\n    " + indentLines(printable(values, true), "    ") + "\nSend? y: send | n: decline | c: cancel\n> "
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
	name := label(f.name)
	if f.Title != "" {
		name = label(f.Title) + " (" + name + ")"
	}
	kind := label(f.Type)
	if f.Format != "" {
		kind += ", " + label(f.Format)
	}
	if f.required {
		kind += ", required"
	}
	fmt.Fprintf(&b, "  %s [%s]\n", name, kind)
	if f.Desc != "" {
		fmt.Fprintf(&b, "    %s\n", indentLines(printable(truncate(f.Desc, terminalDescriptionLimit), true), "    "))
	}
	choices := f.choices()
	for i, c := range choices[:min(len(choices), terminalChoicesShown)] {
		fmt.Fprintf(&b, "    %d) %s\n", i+1, label(c.Title))
	}
	if more := len(choices) - terminalChoicesShown; more > 0 {
		fmt.Fprintf(&b, "    (%d more choices not shown: type one's value)\n", more)
	}
	if len(f.Default) > 0 {
		fmt.Fprintf(&b, "    default: %s (empty line)\n", printable(truncate(string(f.Default), terminalDescriptionLimit), false))
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

// parse reads a field's value from the line typed, and checks it.
func (f *formField) parse(line string, choices []choice) (any, error) {
	v, err := f.read(line, choices)
	if err != nil {
		return nil, err
	}
	return v, f.check(v, choices)
}

// read turns the line typed into a value of the field's type: a choice
// by its number or value, several separated by commas for an array.
func (f *formField) read(line string, choices []choice) (any, error) {
	pick := func(s string) string {
		s = strings.TrimSpace(s)
		if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(choices) {
			return choices[n-1].Const
		}
		return s
	}
	switch {
	case f.Type == "array":
		var out []string
		for _, part := range strings.Split(line, ",") {
			out = append(out, pick(part))
		}
		return out, nil
	case len(choices) > 0:
		return pick(line), nil
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
		if f.Type == "integer" {
			return int64(n), nil
		}
		return n, nil
	}
	return line, nil
}

// check reports whether v, a value decoded from JSON or read from the
// terminal, fits the field: its type, choices, bounds, lengths, number of
// items and string format.
func (f *formField) check(v any, choices []choice) error {
	chosen := func(s string) error {
		for _, c := range choices {
			if c.Const == s {
				return nil
			}
		}
		if len(choices) == 1 {
			return errors.New("not the one choice offered")
		}
		return fmt.Errorf("choose a number from 1 to %d", len(choices))
	}
	switch f.Type {
	case "array":
		items, ok := stringList(v)
		if !ok {
			return errors.New("not a list of choices")
		}
		for _, s := range items {
			if err := chosen(s); err != nil {
				return err
			}
		}
		if f.MinItems != nil && len(items) < *f.MinItems || f.MaxItems != nil && len(items) > *f.MaxItems {
			return errors.New("wrong number of choices")
		}
		return nil
	case "boolean":
		if _, ok := v.(bool); !ok {
			return errors.New("not a boolean")
		}
		return nil
	case "number", "integer":
		n, ok := number(v)
		if !ok || f.Type == "integer" && n != float64(int64(n)) {
			return errors.New("not a " + f.Type)
		}
		if f.Min != nil && n < *f.Min || f.Max != nil && n > *f.Max {
			return errors.New("out of range")
		}
		return nil
	case "string", "":
	default:
		return fmt.Errorf("type %q is not one a form may ask for", label(f.Type))
	}
	s, ok := v.(string)
	if !ok {
		return errors.New("not a string")
	}
	if len(choices) > 0 {
		return chosen(s)
	}
	if f.MinLen != nil && len([]rune(s)) < *f.MinLen || f.MaxLen != nil && len([]rune(s)) > *f.MaxLen {
		return errors.New("wrong length")
	}
	var err error
	switch f.Format {
	case "email":
		_, err = mail.ParseAddress(s)
	case "uri":
		var u *url.URL
		if u, err = url.Parse(s); err == nil && !u.IsAbs() {
			err = errors.New("not an absolute uri")
		}
	case "date":
		_, err = time.Parse(time.DateOnly, s)
	case "date-time":
		_, err = time.Parse(time.RFC3339, s)
	}
	if err != nil {
		return errors.New("not a valid " + f.Format)
	}
	return nil
}

// stringList returns v as strings: a []string, or a []any of strings as
// JSON decodes an array.
func stringList(v any) ([]string, bool) {
	switch v := v.(type) {
	case []string:
		return v, true
	case []any:
		out := make([]string, len(v))
		for i, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, false
			}
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

// number returns v as a float64: any Go number, or a json.Number.
func number(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case float32:
		return float64(v), true
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case int32:
		return float64(v), true
	case json.Number:
		n, err := v.Float64()
		return n, err == nil
	}
	return 0, false
}

// CheckAnswer reports whether a may be sent to the server as the answer
// to e: its Action is "accept", "decline" or "cancel", and the Content of
// an accepted form fits e.Schema, the restricted schema of MCP forms:
// only the schema's fields, each required one given (or left to its
// default, which the client fills in), each value of its field's type
// (string, number, integer, boolean, or an array of choices), one of
// its enum or oneOf values, within its minimum and maximum, minLength
// and maxLength, minItems and maxItems, and of its string format (email,
// uri, date, date-time). A declined, cancelled or URL-mode answer needs
// no content (whatever it holds is not sent). The error names the first
// field that does not fit. A Terminal's answers always fit: it checks
// each value the same way as it is typed.
func (e Elicitation) CheckAnswer(a ElicitAnswer) error {
	switch a.Action {
	case "accept":
	case "decline", "cancel":
		return nil
	default:
		return fmt.Errorf("permission: elicitation answer action %q is not accept, decline or cancel", printable(truncate(a.Action, 40), false))
	}
	if e.Mode == "url" {
		return nil
	}
	fields, err := formFields(e.Schema)
	if err != nil {
		return err
	}
	for name := range a.Content {
		if !slices.ContainsFunc(fields, func(f formField) bool { return f.name == name }) {
			return fmt.Errorf("permission: elicitation answer: field %q is not in the form", printable(truncate(name, 64), false))
		}
	}
	for i := range fields {
		f := &fields[i]
		v, ok := a.Content[f.name]
		if !ok {
			if f.required && len(f.Default) == 0 {
				return fmt.Errorf("permission: elicitation answer: required field %q missing", label(f.name))
			}
			continue
		}
		if err := f.check(v, f.choices()); err != nil {
			return fmt.Errorf("permission: elicitation answer: field %q: %w", label(f.name), err)
		}
	}
	return nil
}
