package agent_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

func ptr(b bool) *bool { return &b }

// The configuration's modes and confirmDestructive reach the policy: which
// calls does it put to the approver?
func TestPolicyOptions(t *testing.T) {
	cfg, err := config.Parse([]byte(`
mcp:
  permissions: auto
  servers:
    - {name: trusted, url: "http://a", confirmDestructive: false}
    - {name: careful, url: "http://b"}
    - {name: asking, url: "http://c", permissions: ask}
`))
	require.NoError(t, err)
	for name, build := range map[string]func(permission.Approver) *permission.Policy{
		"PolicyOptions": func(a permission.Approver) *permission.Policy {
			return permission.NewPolicy(a, agent.PolicyOptions(cfg)...)
		},
		"PolicyFromConfig": func(a permission.Approver) *permission.Policy { return agent.PolicyFromConfig(cfg, a) },
	} {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var asked []string
			policy := build(permission.ApproverFunc(func(_ context.Context, req permission.Request) (permission.Decision, error) {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, req.PrefixedName)
				return permission.Decision{Verdict: permission.AllowOnce}, nil
			}))
			for _, server := range []string{"trusted", "careful", "asking"} {
				for _, destructive := range []bool{false, true} {
					name := server + map[bool]string{false: "_write", true: "_delete"}[destructive]
					req := permission.Request{Server: server, Tool: name, PrefixedName: name,
						Annotations: permission.Annotations{ReadOnlyHint: ptr(false), DestructiveHint: ptr(destructive)}}
					d, err := policy.Check(context.Background(), req)
					require.NoError(t, err)
					assert.True(t, d.Allowed())
				}
			}
			assert.Equal(t, []string{"careful_delete", "asking_write", "asking_delete"}, asked)
		})
	}
}

func TestPermissionRequest(t *testing.T) {
	st := toolset.Tool{
		Name:   "text_count",
		Server: "text",
		Tool: mcp.Tool{
			Name: "count", Description: "Counts words.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
			Annotations: &mcp.ToolAnnotations{Title: "Count words", ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)},
		},
		Changed: true,
	}
	req := agent.PermissionRequest(st, json.RawMessage(`{"text":"a b"}`))
	assert.Equal(t, "text", req.Server)
	assert.Equal(t, "count", req.Tool)
	assert.Equal(t, "text_count", req.PrefixedName)
	assert.Equal(t, "Count words", req.Title, "the annotations' title stands in for a missing title")
	assert.Equal(t, "Counts words.", req.Description)
	assert.JSONEq(t, `{"text":"a b"}`, string(req.Arguments))
	assert.Equal(t, st.Tool.InputSchema, req.InputSchema)
	assert.True(t, req.Annotations.ReadOnly())
	assert.False(t, req.Annotations.OpenWorld())
	assert.True(t, req.Changed)
}
