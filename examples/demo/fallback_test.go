package demo

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent/modelenv"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// textTools serves Text on 127.0.0.1 and discovers its tools.
func textTools(t *testing.T) *toolset.Toolset {
	ctx := context.Background()
	tools, err := toolset.Discover(ctx, []config.Server{{Name: "text", URL: serve(t, Text())}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tools.Shutdown(ctx) })
	return tools
}

func TestMakeCall(t *testing.T) {
	tools := textTools(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		approver permission.Approver
		call     Call
		want     string
		err      error
	}{
		{"allowed", permission.AllowAll{}, Call{"text_count", map[string]any{"text": "a b"}},
			"→ text_count {\"text\":\"a b\"}\n← ok:\n  2 words, 3 characters, 1 line\n", nil},
		{"tool error", permission.AllowAll{}, Call{"text_transform", map[string]any{"text": "a", "to": "x"}},
			"← the tool reported an error:\n  unknown transformation \"x\"", nil},
		{"denied", permission.DenyAll{Reason: "not today"}, Call{"text_count", map[string]any{"text": "a"}},
			"← not run (deny: not today)\n", nil},
		{"unknown tool", permission.AllowAll{}, Call{"text_nope", nil}, "", toolset.ErrUnknownTool},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := makeCall(ctx, &out, tools, permission.NewPolicy(tc.approver), tc.call)
			if tc.err != nil {
				assert.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Contains(t, out.String(), tc.want)
		})
	}
}

func TestFallback(t *testing.T) {
	tools := textTools(t)
	why := &modelenv.Unavailable{Reason: "nothing set"}
	help := "\n" + modelenv.Help(why) + "\n\n"
	count := Call{"text_count", map[string]any{"text": "a b"}}
	for _, tc := range []struct {
		name     string
		canceled bool
		calls    []Call
		want     string
		err      error
	}{
		{"calls in order", false, []Call{count, {"text_sort_lines", map[string]any{"text": "b\na"}}},
			help + "Intro.\n" +
				"→ text_count {\"text\":\"a b\"}\n← ok:\n  2 words, 3 characters, 1 line\n" +
				"→ text_sort_lines {\"text\":\"b\\na\"}\n← ok:\n  a\n  b\n", nil},
		{"a call that cannot be made ends them", false, []Call{{"text_nope", nil}, count},
			help + "Intro.\n", toolset.ErrUnknownTool},
		{"the program is stopping", true, []Call{count}, "", context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.canceled {
				cancel()
			}
			var out bytes.Buffer
			f := Fallback{Intro: "Intro.\n", Calls: tc.calls}
			err := f.Run(ctx, &out, why, tools, permission.NewPolicy(permission.AllowAll{}))
			if tc.err != nil {
				assert.ErrorIs(t, err, tc.err)
			} else {
				assert.NoError(t, err)
			}
			assert.Equal(t, tc.want, out.String())
		})
	}
}
