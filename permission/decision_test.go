package permission_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/permission"
)

func TestDecision(t *testing.T) {
	tests := []struct {
		d       permission.Decision
		allowed bool
		text    string
		denial  string
	}{
		{permission.Decision{}, false, "deny",
			"Permission denied: the call to tool \"gh_x\" was not run.\nDo not retry this call unless the user asks you to."},
		{permission.Decision{Verdict: permission.Deny, Reason: "not on main"}, false, "deny: not on main",
			"Permission denied: the call to tool \"gh_x\" was not run. Reason: not on main\nDo not retry this call unless the user asks you to."},
		{permission.Decision{Verdict: permission.AllowOnce}, true, "allow once", ""},
		{permission.Decision{Verdict: permission.AllowTool}, true, "allow tool", ""},
		{permission.Decision{Verdict: permission.AllowServer}, true, "allow server", ""},
		{permission.Decision{Verdict: permission.Verdict(9), Reason: "?"}, false, "Verdict(9): ?",
			"Permission denied: the call to tool \"gh_x\" was not run. Reason: ?\nDo not retry this call unless the user asks you to."},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			assert.Equal(t, tc.allowed, tc.d.Allowed())
			assert.Equal(t, tc.text, tc.d.String())
			assert.Equal(t, tc.denial, tc.d.DenialMessage("gh_x"))
		})
	}
}

func TestMode(t *testing.T) {
	for _, m := range []permission.Mode{permission.ModeAsk, permission.ModeAuto} {
		got, err := permission.ParseMode(string(m))
		require.NoError(t, err)
		assert.Equal(t, m, got)
	}
	for _, bad := range []string{"", "Ask", "always", "auto "} {
		_, err := permission.ParseMode(bad)
		assert.ErrorContains(t, err, "permission: unknown mode", bad)
	}
}

func TestSourceString(t *testing.T) {
	for s, want := range map[permission.Source]string{
		permission.SourceAsked: "asked", permission.SourceRemembered: "remembered",
		permission.SourceAuto: "auto", permission.SourceFailed: "failed", 0: "unknown",
	} {
		assert.Equal(t, want, s.String())
	}
}

func TestReadyMadeApprovers(t *testing.T) {
	req := tool("github", "create_issue")
	d, err := permission.AllowAll{}.Approve(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, permission.Decision{Verdict: permission.AllowOnce}, d)
	d, err = permission.DenyAll{Reason: "read-only session"}.Approve(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, permission.Decision{Verdict: permission.Deny, Reason: "read-only session"}, d)
}
