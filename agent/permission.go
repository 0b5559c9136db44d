package agent

import (
	"encoding/json"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// PolicyFromConfig returns the policy a configuration asks for: a, the host's
// Approver, asked as the file's permissions, sampling and
// confirmDestructive say,
// globally and per server; opts come after those and may override them.
// It is permission.NewPolicy(a, PolicyOptions(cfg)...) in one call, so that
// the file's permissions cannot be forgotten.
func PolicyFromConfig(cfg *config.Config, a permission.Approver, opts ...permission.Option) *permission.Policy {
	return permission.NewPolicy(a, append(PolicyOptions(cfg), opts...)...)
}

// PolicyOptions turns the permission settings of a configuration into
// options for permission.NewPolicy: the global mode, sampling mode and
// confirmDestructive, mode auto for BuiltinServer (the tool search reads
// only the catalogue; the tools it loads are asked about when called),
// then each server's own.
func PolicyOptions(cfg *config.Config) []permission.Option {
	opts := []permission.Option{
		permission.WithMode(cfg.Permissions),
		permission.WithSamplingMode(cfg.Sampling),
		permission.WithConfirmDestructive(cfg.ConfirmDestructive),
		permission.WithServerMode(BuiltinServer, permission.ModeAuto),
	}
	for _, s := range cfg.Servers {
		opts = append(opts,
			permission.WithServerMode(s.Name, s.Permissions),
			permission.WithServerSamplingMode(s.Name, s.Sampling),
			permission.WithServerConfirmDestructive(s.Name, s.ConfirmDestructive))
	}
	return opts
}

// PermissionRequest describes a call of an MCP tool to the permission
// policy, as the agent does before each call it runs: a host that calls a
// tool itself asks the same way. args is the JSON object of arguments.
func PermissionRequest(st toolset.Tool, args json.RawMessage) permission.Request {
	return mcpTool(st, nil).request(args)
}

// permissionAnnotations converts a tool's MCP annotations.
func permissionAnnotations(a *mcp.ToolAnnotations) permission.Annotations {
	if a == nil {
		return permission.Annotations{}
	}
	return permission.Annotations{ReadOnlyHint: a.ReadOnlyHint, DestructiveHint: a.DestructiveHint,
		IdempotentHint: a.IdempotentHint, OpenWorldHint: a.OpenWorldHint}
}
