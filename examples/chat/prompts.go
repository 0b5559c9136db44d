package main

import (
	"context"
	"fmt"
	"strings"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/render"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// The servers' prompts are the chat's commands, their resources what a
// question can attach:
//
//	/prompts                    lists the prompts and their arguments
//	/finance_monthly_report March   runs one (arguments in order, or name=value)
//	/resources                  lists the resources and templates
//	what is due? @file:///todo.txt  attaches a resource to the question

// promptCommand runs /prompts, /resources, or a prompt by its name; it
// reports false for a line that is none of them.
func (c *chat) promptCommand(line string) bool {
	name, rest, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	switch name {
	case "prompts":
		for _, p := range c.tools.Prompts() {
			var args []string
			for _, a := range p.Prompt.Arguments {
				if a.Required {
					args = append(args, a.Name)
				} else {
					args = append(args, "["+a.Name+"]")
				}
			}
			fmt.Fprintf(c.out, "/%s %s  %s\n", p.Name, strings.Join(args, " "), p.Prompt.Description)
		}
		return true
	case "resources":
		for _, r := range c.tools.Resources() {
			fmt.Fprintf(c.out, "@%s  (%s, %s)\n", r.Resource.URI, r.Server, r.Resource.Name)
		}
		for _, t := range c.tools.ResourceTemplates() {
			fmt.Fprintf(c.out, "@%s  (%s template, %s)\n", t.Template.URITemplate, t.Server, t.Template.Name)
		}
		return true
	}
	p, ok := c.tools.Prompt(name)
	if !ok {
		return false
	}
	args, ok := c.promptArgs(p, strings.Fields(rest))
	if !ok {
		return true
	}
	res, err := c.tools.GetPrompt(context.Background(), p.Name, args)
	if err == nil {
		var msgs []agent.Message
		if msgs, err = c.agent.PromptMessages(res); err == nil {
			c.turn(line, msgs...)
		}
	}
	if err != nil {
		fmt.Fprintf(c.out, "(prompt %s: %s)\n", p.Name, render.Clean(err.Error(), 300))
	}
	return true
}

// promptArgs takes a prompt's arguments from the words typed after its
// name, name=value or in the prompt's order, and asks for each required
// one still missing; false means the input ended or Ctrl-C was pressed.
func (c *chat) promptArgs(p toolset.Prompt, words []string) (map[string]string, bool) {
	args := map[string]string{}
	next := 0
	for _, w := range words {
		if k, v, ok := strings.Cut(w, "="); ok {
			args[k] = v
		} else if next < len(p.Prompt.Arguments) {
			args[p.Prompt.Arguments[next].Name] = w
			next++
		} else if n := len(p.Prompt.Arguments); n > 0 {
			args[p.Prompt.Arguments[n-1].Name] += " " + w // the last takes the rest
		}
	}
	for _, a := range p.Prompt.Arguments {
		if _, ok := args[a.Name]; ok || !a.Required {
			continue
		}
		fmt.Fprintf(c.out, "%s (%s)> ", a.Name, a.Description)
		line, err := c.next()
		if err != nil {
			fmt.Fprintln(c.out, "\n(prompt not run)")
			return nil, false
		}
		args[a.Name] = strings.TrimSpace(line)
	}
	return args, true
}

// question is the user's message for a line, with the resources its
// @words name attached.
func (c *chat) question(line string) (agent.Message, error) {
	var words []string
	var uris []string
	for _, w := range strings.Fields(line) {
		if strings.HasPrefix(w, "@") && len(w) > 1 {
			uris = append(uris, w[1:])
		} else {
			words = append(words, w)
		}
	}
	m := agent.UserMessage(strings.Join(words, " "))
	if len(uris) == 0 {
		m = agent.UserMessage(line)
	}
	for _, uri := range uris {
		r, err := c.tools.ReadResource(context.Background(), uri)
		if err != nil {
			return m, err
		}
		if m, err = c.agent.AttachResource(m, r); err != nil {
			return m, err
		}
	}
	return m, nil
}
