package permission_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/permission"
)

// An Approver that defers gets a denial with an error matching ErrDeferred,
// audited as deferred; the late answer, given to Answer, is audited as
// asked, and an "always" answer is remembered like one given in Check.
func TestPolicyDeferredThenAnswered(t *testing.T) {
	var events []permission.Event
	asked := 0
	p := permission.NewPolicy(permission.ApproverFunc(func(context.Context, permission.Request) (permission.Decision, error) {
		asked++
		return permission.Decision{}, fmt.Errorf("the user is away: %w", permission.ErrDeferred)
	}), permission.WithAudit(func(e permission.Event) { events = append(events, e) }))
	req := tool("fs", "write")

	d, err := p.Check(context.Background(), req)
	require.ErrorIs(t, err, permission.ErrDeferred)
	assert.False(t, d.Allowed())
	assert.Equal(t, "the approval was deferred", d.Reason)
	require.Len(t, events, 1)
	assert.Equal(t, permission.SourceDeferred, events[0].Source)
	assert.Equal(t, "deferred", events[0].Source.String())
	assert.ErrorIs(t, events[0].Err, permission.ErrDeferred)

	d = p.Answer(req, permission.Decision{Verdict: permission.AllowTool})
	assert.Equal(t, permission.AllowTool, d.Verdict)
	require.Len(t, events, 2)
	assert.Equal(t, permission.SourceAsked, events[1].Source)
	assert.Equal(t, permission.AllowTool, events[1].Verdict)
	assert.NoError(t, events[1].Err)

	// The allowance holds: the Approver is not asked again.
	d, err = p.Check(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, permission.AllowTool, d.Verdict)
	assert.Equal(t, permission.SourceRemembered, events[2].Source)
	assert.Equal(t, 1, asked)
}

// A late answer that is not an allowance denies, with its reason kept and
// any other verdict value made Deny; nothing is remembered.
func TestPolicyAnswerDenies(t *testing.T) {
	var events []permission.Event
	p := permission.NewPolicy(permission.DenyAll{Reason: "asked in Check"},
		permission.WithAudit(func(e permission.Event) { events = append(events, e) }))
	req := tool("fs", "write")
	d := p.Answer(req, permission.Decision{Verdict: permission.Verdict(42), Reason: "not now"})
	assert.Equal(t, permission.Decision{Verdict: permission.Deny, Reason: "not now"}, d)
	require.Len(t, events, 1)
	assert.Equal(t, permission.Deny, events[0].Verdict)

	d, err := p.Check(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "asked in Check", d.Reason, "the denial is not remembered")
}

// A deferral that comes after the question's timeout is a timeout, not a
// deferral: the caller cannot tell the user's answer will come.
func TestPolicyDeferredAfterTimeout(t *testing.T) {
	p := permission.NewPolicy(permission.ApproverFunc(func(ctx context.Context, _ permission.Request) (permission.Decision, error) {
		<-ctx.Done()
		return permission.Decision{}, permission.ErrDeferred
	}), permission.WithTimeout(1))
	d, err := p.Check(context.Background(), tool("fs", "write"))
	assert.False(t, d.Allowed())
	assert.Equal(t, "no answer within 1ns", d.Reason)
	assert.True(t, errors.Is(err, permission.ErrDeferred), "the Approver's error is kept: %v", err)
}

// The deferral's error holds the request as the Approver saw it: with
// Changed, which the Policy sets, for the host to show later.
func TestPolicyDeferredErrorHoldsRequest(t *testing.T) {
	allow := true
	p := permission.NewPolicy(permission.ApproverFunc(func(context.Context, permission.Request) (permission.Decision, error) {
		if allow {
			return permission.Decision{Verdict: permission.AllowOnce}, nil
		}
		return permission.Decision{}, permission.ErrDeferred
	}))
	req := tool("fs", "write")
	_, err := p.Check(context.Background(), req)
	require.NoError(t, err)
	allow = false
	req.Description = "Writes a file, then mails it."
	_, err = p.Check(context.Background(), req)
	var de *permission.DeferredError
	require.ErrorAs(t, err, &de)
	assert.True(t, de.Request.Changed)
	assert.Equal(t, "Writes a file, then mails it.", de.Request.Description)
	assert.False(t, req.Changed, "the caller's request is not modified")
	assert.Equal(t, "permission: approving fs_write: permission: approval deferred", err.Error())
}
