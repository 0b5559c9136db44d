package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// skillScenarios run the skills extension (SEP-2640) as a host does,
// through a Toolset: connect and list the catalogue; then, when the
// scenario's user asks to use the skills, load each one through the
// Toolset's loading path and read the files its manifest lists only once
// the skill loaded. The scenario sets only whether the user asks.
var skillScenarios = map[string]bool{
	"sep-2640-client-no-prefetch":        false,
	"sep-2640-client-verify-digest":      true,
	"sep-2640-client-verify-size":        true,
	"sep-2640-client-verify-frontmatter": true,
}

func runSkills(ctx context.Context, url string, use bool, log *slog.Logger) error {
	ts, err := toolset.Discover(ctx, []config.Server{{Name: "conformance", URL: url}}, &toolset.Options{
		Logger: log,
		Client: mcp.Options{Skills: true, ClientInfo: mcp.Implementation{Name: "mini-me-conformance", Version: "0.1.0"}},
	})
	if err != nil {
		return err
	}
	defer func() { _ = ts.Close() }()
	for _, st := range ts.Servers() {
		if st.Err != nil {
			return st.Err
		}
	}
	skills := ts.Skills()
	log.Info("skill catalogue", "skills", len(skills))
	if !use {
		return nil
	}
	for _, sk := range skills {
		body, err := ts.LoadSkill(ctx, sk.Name)
		if errors.Is(err, mcp.ErrSkillVerification) {
			// The refusal is the expected outcome of a tampered skill:
			// reported, nothing of it used.
			log.Warn("skill refused", "skill", sk.Name, "error", err)
			continue
		}
		if err != nil {
			return fmt.Errorf("loading skill %s: %w", sk.Name, err)
		}
		log.Info("skill loaded", "skill", sk.Name, "bytes", len(body.Data))
		for _, f := range sk.Skill.Files {
			if f.URI == sk.Skill.URI {
				continue
			}
			ref := strings.TrimPrefix(f.URI, sk.Skill.Root()+"/")
			if _, err := ts.ReadSkillFile(ctx, sk.Name, ref); err != nil {
				return fmt.Errorf("skill %s: %s: %w", sk.Name, ref, err)
			}
		}
	}
	return nil
}
