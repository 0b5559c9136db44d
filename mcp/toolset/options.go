package toolset

import (
	"fmt"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// checkOptions refuses the callbacks of the client template that the
// Toolset sets on each server's client itself: set there, they would be
// silently replaced.
func checkOptions(o *mcp.Options) error {
	own := []struct {
		name string
		set  bool
		use  string
	}{
		{"OnToolsChanged", o.OnToolsChanged != nil, "Options.OnChange"},
		{"OnPromptsChanged", o.OnPromptsChanged != nil, "Toolset.Prompts, which it keeps current"},
		{"OnResourcesChanged", o.OnResourcesChanged != nil, "Toolset.Resources, which it keeps current"},
		{"OnResourceUpdated", o.OnResourceUpdated != nil, "Options.OnResourceUpdated"},
		{"OnInvalidTool", o.OnInvalidTool != nil, "the WarnInvalidTool warnings"},
	}
	for _, c := range own {
		if c.set {
			return fmt.Errorf("%w: Client.%s is the Toolset's own (use %s)", ErrOptions, c.name, c.use)
		}
	}
	return nil
}
