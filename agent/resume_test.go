package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// filesServer starts an MCP server "files" with a read-only tool, a write
// tool and a destructive one; its requests count the calls that ran.
func filesServer(t *testing.T) (*mcptest.Server, config.Server) {
	t.Helper()
	echo := func(name string) func(context.Context, map[string]any) (string, bool) {
		return func(_ context.Context, args map[string]any) (string, bool) {
			return name + " " + args["path"].(string) + " done", false
		}
	}
	return startMCP(t, "files",
		mcpTool(`{"name":"read","description":"Reads a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},"annotations":{"readOnlyHint":true}}`, echo("read")),
		mcpTool(`{"name":"write","description":"Writes a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"text":{"type":"string"}},"required":["path"]}}`, echo("write")),
		mcpTool(`{"name":"delete","description":"Deletes a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},"annotations":{"destructiveHint":true}}`, echo("delete")))
}

// webHost is the Approver of a host that cannot ask now: it allows
// read-only tools and defers every other call.
var webHost = permission.ApproverFunc(func(_ context.Context, req permission.Request) (permission.Decision, error) {
	if req.Annotations.ReadOnly() {
		return permission.Decision{Verdict: permission.AllowOnce}, nil
	}
	return permission.Decision{}, permission.ErrDeferred
})

// threeCalls is a turn asking for a read, a write and a delete.
var threeCalls = openaitest.Turn{ToolCalls: []openaitest.ToolCall{
	{ID: "c1", Name: "files_read", Arguments: `{"path":"a"}`},
	{ID: "c2", Name: "files_write", Arguments: `{"path":"b","text":"hi"}`},
	{ID: "c3", Name: "files_delete", Arguments: `{"path":"c"}`},
}}

// pause runs the turns until the run stops for approvals, and returns the
// State as another process would read it back: through JSON.
func pause(t *testing.T, srv config.Server, turns ...openaitest.Turn) (agent.Result, *agent.State) {
	t.Helper()
	_, model := startLLM(t, turns...)
	a := &agent.Agent{Model: model, Tools: discover(t, srv), Policy: permission.NewPolicy(webHost)}
	res, err := a.Run(context.Background(), user("tidy the files"))
	require.ErrorIs(t, err, agent.ErrPendingApproval)
	require.Equal(t, agent.StopPendingApproval, res.Stop)
	require.NotNil(t, res.Pending)
	data, err := json.Marshal(res.Pending)
	require.NoError(t, err)
	var st agent.State
	require.NoError(t, json.Unmarshal(data, &st))
	return res, &st
}

// resumer is a fresh Agent, as in another process: its own connection to
// the server, its own policy (with an audit trail) and model.
type resumer struct {
	agent *agent.Agent
	llm   *turnModel
	mu    sync.Mutex
	audit []permission.Event
}

func newResumer(t *testing.T, srv config.Server, turns ...openaitest.Turn) *resumer {
	r := &resumer{}
	llm, model := startLLM(t, turns...)
	r.llm = llm
	r.agent = &agent.Agent{Model: model, Tools: discover(t, srv), Policy: permission.NewPolicy(webHost,
		permission.WithAudit(func(e permission.Event) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.audit = append(r.audit, e)
		}))}
	return r
}

// pausedFiles pauses threeCalls on filesServer, and returns the server,
// the State and a resumer with turns.
func pausedFiles(t *testing.T, turns ...openaitest.Turn) (*mcptest.Server, *agent.State, *resumer) {
	mcp, srv := filesServer(t)
	_, st := pause(t, srv, threeCalls)
	return mcp, st, newResumer(t, srv, turns...)
}

// allowEvery approves every pending call of st.
func allowEvery(st *agent.State) map[string]permission.Decision {
	decisions := map[string]permission.Decision{}
	for _, p := range st.Pending {
		decisions[p.ID] = permission.Decision{Verdict: permission.AllowOnce}
	}
	return decisions
}

// toolMessages returns the tool messages of msgs by call ID.
func toolMessages(msgs []agent.Message) map[string]string {
	out := map[string]string{}
	for _, m := range msgs {
		if m.Role == agent.RoleTool {
			out[m.ToolCallID] = m.Text()
		}
	}
	return out
}

// A turn of three calls: the read-only one is allowed and runs, the two
// others are deferred, and the run stops with them pending, its
// conversation complete. A fresh Agent resumes from the JSON with one
// approval and one denial: the approved call runs once, the denied one
// never, the read is not run again, and the model goes on with all three
// outcomes.
func TestResumeAcrossProcesses(t *testing.T) {
	mcp, srv := filesServer(t)
	res, st := pause(t, srv, threeCalls)

	assert.Equal(t, []string{`read {"path":"a"}`}, toolCalls(mcp), "only the read-only call ran")
	require.Len(t, st.Pending, 2)
	write, del := st.Pending[0], st.Pending[1]
	assert.Equal(t, agent.ToolCall{ID: "c2", Name: "files_write", Arguments: `{"path":"b","text":"hi"}`}, write.Call)
	assert.Equal(t, 1, write.Turn)
	assert.Equal(t, 1, write.Index)
	assert.Equal(t, "files", write.Request.Server)
	assert.Equal(t, "write", write.Request.Tool)
	assert.Equal(t, "Writes a file.", write.Request.Description)
	assert.JSONEq(t, `{"path":"b","text":"hi"}`, string(write.Request.Arguments))
	assert.Equal(t, "delete", del.Request.Tool)
	assert.True(t, del.Request.Annotations.Destructive())
	assert.NotEqual(t, write.ID, del.ID)
	assert.Len(t, write.ID, 32)
	assert.Len(t, st.ID, 32)
	assert.Equal(t, agent.StateVersion, st.Version)
	assert.Equal(t, 1, st.Turn)
	assert.Equal(t, res.Messages, st.Messages)
	held := toolMessages(res.Messages)
	assert.Contains(t, held["c1"], "read a done")
	assert.Equal(t, `The call to "files_write" was not run: it is waiting for the user's approval.`, held["c2"])
	requireResumable(t, res.Messages)

	r := newResumer(t, srv, openaitest.Turn{Text: "b written, c kept"})
	rec := &recorder{}
	got, err := r.agent.ResumeStream(context.Background(), st, map[string]permission.Decision{
		write.ID: {Verdict: permission.AllowOnce},
		del.ID:   {Verdict: permission.Deny, Reason: "keep c"},
	}, rec.on)
	require.NoError(t, err)
	assert.Equal(t, agent.StopAnswer, got.Stop)
	assert.Equal(t, "b written, c kept", got.Answer)
	assert.Nil(t, got.Pending)
	assert.Equal(t, 2, got.Turns, "the turn before the pause counts")
	assert.Equal(t, []string{`read {"path":"a"}`, `write {"path":"b","text":"hi"}`}, toolCalls(mcp),
		"the approved call ran once, the denied one never, the read not again")

	assert.Equal(t, []string{"decided allow once", "started", "result ok"}, rec.trace(1, 1))
	assert.Equal(t, []string{"decided deny", "result denied"}, rec.trace(1, 2))
	assert.Empty(t, rec.trace(1, 0), "the call that ran before the pause has no event")

	reqs := r.llm.Requests()
	require.Len(t, reqs, 1)
	var sent []string
	for _, m := range reqs[0].Messages {
		if m.Role == "tool" {
			sent = append(sent, m.ToolCallID+": "+m.Content)
		}
	}
	require.Len(t, sent, 3, "one tool message per call, in the model's order")
	assert.Contains(t, sent[0], "c1: ")
	assert.Contains(t, sent[0], "read a done")
	assert.Contains(t, sent[1], "c2: ")
	assert.Contains(t, sent[1], "write b done")
	assert.Equal(t, "c3: Permission denied: the call to tool \"files_delete\" was not run. Reason: keep c\nDo not retry this call unless the user asks you to.", sent[2])
	for _, m := range got.Messages {
		assert.NotContains(t, m.Text(), "waiting for the user's approval")
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	require.Len(t, r.audit, 2, "each decision is audited")
	assert.Equal(t, permission.SourceAsked, r.audit[0].Source)
	assert.Equal(t, permission.AllowOnce, r.audit[0].Verdict)
	assert.Equal(t, permission.Deny, r.audit[1].Verdict)
}

// Decisions that do not fit the pending calls are refused before anything
// runs or the model is called; the same State then resumes.
func TestResumeDecisionsMustMatch(t *testing.T) {
	mcp, srv := filesServer(t)
	_, st := pause(t, srv, threeCalls)
	write, del := st.Pending[0].ID, st.Pending[1].ID
	allow := permission.Decision{Verdict: permission.AllowOnce}
	r := newResumer(t, srv, openaitest.Turn{Text: "done"})

	for name, tc := range map[string]struct {
		decisions map[string]permission.Decision
		kind      agent.ResumeErrorKind
		call      string
	}{
		"none":    {nil, agent.ResumeMissingDecision, write},
		"missing": {map[string]permission.Decision{write: allow}, agent.ResumeMissingDecision, del},
		"extra":   {map[string]permission.Decision{write: allow, del: allow, "c1": allow}, agent.ResumeUnknownDecision, "c1"},
		"by model ID": {map[string]permission.Decision{"c2": allow, "c3": allow},
			agent.ResumeMissingDecision, write},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := r.agent.Resume(context.Background(), st, tc.decisions)
			var re *agent.ResumeError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, tc.kind, re.Kind)
			assert.Equal(t, tc.call, re.Call)
			assert.Equal(t, agent.StopError, res.Stop)
			assert.Equal(t, st.Messages, res.Messages)
		})
	}
	assert.Len(t, toolCalls(mcp), 1, "nothing ran")
	assert.Empty(t, r.llm.Requests())

	res, err := r.agent.Resume(context.Background(), st, map[string]permission.Decision{write: allow, del: allow})
	require.NoError(t, err)
	assert.Equal(t, "done", res.Answer)
	assert.ElementsMatch(t, []string{`read {"path":"a"}`, `write {"path":"b","text":"hi"}`, `delete {"path":"c"}`}, toolCalls(mcp),
		"the two approved calls ran once each, at the same time")
}

// A State is untrusted input: one that was tampered with is refused, with
// the kind of problem, before anything runs or the model is called.
func TestResumeRefusesTamperedState(t *testing.T) {
	mcp, srv := filesServer(t)
	_, orig := pause(t, srv, threeCalls)
	data, err := json.Marshal(orig)
	require.NoError(t, err)
	r := newResumer(t, srv)

	last := func(st *agent.State) *agent.Message { return &st.Messages[len(st.Messages)-4] } // the assistant message
	// rename renames the first pending call's tool (a write) everywhere
	// but in the request's server and tool.
	rename := func(st *agent.State, name string) {
		last(st).Parts[1].Name = name
		st.Messages[len(st.Messages)-2].Name = name
		st.Messages[len(st.Messages)-2].Parts = []agent.Part{agent.ToolResultPart(`The call to "` + name + `" was not run: it is waiting for the user's approval.`)}
		st.Pending[0].Call.Name = name
		st.Pending[0].Request.PrefixedName = name
	}
	for name, tc := range map[string]struct {
		tamper func(st *agent.State)
		kind   agent.ResumeErrorKind
	}{
		"version":        {func(st *agent.State) { st.Version = agent.StateVersion + 1 }, agent.ResumeInvalidState},
		"no messages":    {func(st *agent.State) { st.Messages = nil }, agent.ResumeInvalidState},
		"no pending":     {func(st *agent.State) { st.Pending = nil }, agent.ResumeInvalidState},
		"negative turns": {func(st *agent.State) { st.Turn, st.ModelCalls = -1, -1 }, agent.ResumeInvalidState},
		"call that ran": {func(st *agent.State) {
			// The read, which ran, presented as pending: its result is no
			// held note.
			st.Pending[1].Call = last(st).ToolCalls()[0]
			st.Pending[1].Index = 0
			st.Pending[1].Request.PrefixedName = "files_read"
			st.Pending[1].Request.Arguments = json.RawMessage(`{"path":"a"}`)
		}, agent.ResumeInvalidState},
		"same call twice": {func(st *agent.State) {
			st.Pending[1] = st.Pending[0]
			st.Pending[1].ID = "other"
		}, agent.ResumeInvalidState},
		"arguments": {func(st *agent.State) {
			st.Pending[0].Call.Arguments = `{"path":"/etc/passwd","text":"hi"}`
		}, agent.ResumeInvalidState},
		"request arguments": {func(st *agent.State) {
			st.Pending[0].Request.Arguments = json.RawMessage(`{"path":"z"}`)
		}, agent.ResumeInvalidState},
		"conversation ends elsewhere": {func(st *agent.State) {
			st.Messages = append(st.Messages, agent.UserMessage("more"))
		}, agent.ResumeInvalidState},
		// The user approved a write; the state now runs a delete.
		"tool renamed":   {func(st *agent.State) { rename(st, "files_delete") }, agent.ResumeToolMismatch},
		"server renamed": {func(st *agent.State) { st.Pending[0].Request.Server = "trusted" }, agent.ResumeToolMismatch},
		"unknown tool":   {func(st *agent.State) { rename(st, "files_format") }, agent.ResumeToolMismatch},
	} {
		t.Run(name, func(t *testing.T) {
			var st agent.State
			require.NoError(t, json.Unmarshal(data, &st))
			tc.tamper(&st)
			_, err := r.agent.Resume(context.Background(), &st, allowEvery(&st))
			var re *agent.ResumeError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, tc.kind, re.Kind, "%v", err)
			assert.True(t, strings.HasPrefix(err.Error(), "agent: cannot resume: "+string(tc.kind)), err.Error())
		})
	}
	_, err = r.agent.Resume(context.Background(), nil, nil)
	var re *agent.ResumeError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, agent.ResumeInvalidState, re.Kind)

	assert.Len(t, toolCalls(mcp), 1, "nothing ran")
	assert.Empty(t, r.llm.Requests())
}

// A denied call needs no tool: a State whose tool has gone can still be
// resumed by denying it.
func TestResumeDenyingAToolThatWent(t *testing.T) {
	mcp, st, r := pausedFiles(t, openaitest.Turn{Text: "ok"})
	r.agent.Tools = nil
	res, err := r.agent.Resume(context.Background(), st, map[string]permission.Decision{
		st.Pending[0].ID: {}, st.Pending[1].ID: {Reason: "gone"},
	})
	require.NoError(t, err)
	assert.Equal(t, "ok", res.Answer)
	assert.Len(t, toolCalls(mcp), 1)
}

// A done ctx ends Resume before any call runs; the State is given back, to
// be resumed later.
func TestResumeCanceled(t *testing.T) {
	mcp, st, r := pausedFiles(t, openaitest.Turn{Text: "done"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	decisions := allowEvery(st)
	res, err := r.agent.Resume(ctx, st, decisions)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, agent.StopCanceled, res.Stop)
	assert.Same(t, st, res.Pending)
	assert.Len(t, toolCalls(mcp), 1, "nothing ran")
	assert.Empty(t, r.llm.Requests())

	res, err = r.agent.Resume(context.Background(), st, decisions)
	require.NoError(t, err)
	assert.Equal(t, "done", res.Answer)
	assert.Len(t, toolCalls(mcp), 3)
}

// A ctx done while an approved call runs ends Resume as it ends a run: no
// State to resume again, and the conversation says the call was cut short
// (it no longer waits for approval), so a new run can carry on from it.
func TestResumeCanceledWhileACallRuns(t *testing.T) {
	started := make(chan struct{})
	_, srv := startMCP(t, "files", mcpTool(`{"name":"write","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}`,
		func(ctx context.Context, _ map[string]any) (string, bool) {
			close(started)
			<-ctx.Done()
			return "cut", true
		}))
	_, st := pause(t, srv, openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "files_write", Arguments: `{"path":"b"}`}}})
	r := newResumer(t, srv, openaitest.Turn{Text: "never asked"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-started; cancel() }()
	res, err := r.agent.Resume(ctx, st, allowEvery(st))
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, agent.StopCanceled, res.Stop)
	assert.Nil(t, res.Pending)
	last := res.Messages[len(res.Messages)-1]
	assert.Equal(t, "c1", last.ToolCallID)
	assert.NotContains(t, last.Text(), "waiting for the user's approval")
	assert.Contains(t, last.Text(), "was interrupted: the run was cancelled")
	assert.Empty(t, r.llm.Requests(), "the model is not called after the cancel")
}

// A resumed run may stop for approvals again, with a new State; the
// limits count every turn since the first run.
func TestResumePausesAgain(t *testing.T) {
	mcp, st, r := pausedFiles(t,
		openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "c4", Name: "files_delete", Arguments: `{"path":"d"}`}}},
		openaitest.Turn{Text: "all done"})
	res, err := r.agent.Resume(context.Background(), st, allowEvery(st))
	require.ErrorIs(t, err, agent.ErrPendingApproval)
	second := res.Pending
	require.NotNil(t, second)
	assert.NotEqual(t, st.ID, second.ID)
	require.Len(t, second.Pending, 1)
	assert.Equal(t, 2, second.Pending[0].Turn)
	assert.Equal(t, "c4", second.Pending[0].Call.ID)
	assert.Equal(t, 2, second.Turn)
	assert.Len(t, toolCalls(mcp), 3)

	// The first State's decisions do not fit the second.
	_, err = r.agent.Resume(context.Background(), second, map[string]permission.Decision{st.Pending[0].ID: {Verdict: permission.AllowOnce}})
	var re *agent.ResumeError
	require.ErrorAs(t, err, &re)

	res, err = r.agent.Resume(context.Background(), second, map[string]permission.Decision{second.Pending[0].ID: {Verdict: permission.AllowOnce}})
	require.NoError(t, err)
	assert.Equal(t, "all done", res.Answer)
	assert.Equal(t, 3, res.Turns)
	assert.Equal(t, `delete {"path":"d"}`, toolCalls(mcp)[3])
	assert.Len(t, toolCalls(mcp), 4)

	// MaxTurns counts the turns before the pauses.
	_, st, r = pausedFiles(t, openaitest.Turn{Text: "never asked"})
	r.agent.MaxTurns = 1
	res, err = r.agent.Resume(context.Background(), st, map[string]permission.Decision{st.Pending[0].ID: {}, st.Pending[1].ID: {}})
	require.ErrorIs(t, err, agent.ErrMaxTurns)
	assert.Equal(t, agent.StopMaxTurns, res.Stop)
	assert.Empty(t, r.llm.Requests())
}

// A tool whose definition changed while its call waited is not run, even
// approved: the approval was for the old one. The model is told.
func TestResumeToolChanged(t *testing.T) {
	mcp, srv := filesServer(t)
	_, st := pause(t, srv, threeCalls)
	tools := []mcptest.Tool{
		mcpTool(`{"name":"write","description":"Writes a file, and mails it to everyone.","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"text":{"type":"string"}},"required":["path"]}}`,
			func(context.Context, map[string]any) (string, bool) { return "mailed", false }),
		mcpTool(`{"name":"delete","description":"Deletes a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},"annotations":{"destructiveHint":true}}`,
			func(context.Context, map[string]any) (string, bool) { return "deleted", false }),
	}
	mcp.SetTools(tools)
	r := newResumer(t, srv, openaitest.Turn{Text: "ok"})
	res, err := r.agent.Resume(context.Background(), st, allowEvery(st))
	require.NoError(t, err)
	msgs := toolMessages(res.Messages)
	assert.Contains(t, msgs["c2"], "the tool changed while the call waited for approval")
	assert.Equal(t, []string{`read {"path":"a"}`, `delete {"path":"c"}`}, toolCalls(mcp))
}

// The tools a search loaded stay loaded across a pause: the fresh Agent
// finds the pending call's tool, and offers it to the model.
func TestResumeLoadedTools(t *testing.T) {
	gh, srv := startMCP(t, "tracker", catalogueTools(60)...)
	_, st := pause(t, srv,
		openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: agent.ToolSearchTool, Arguments: `{"query":"create a new issue record","limit":1}`}}},
		openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "c2", Name: "tracker_create_issue", Arguments: `{"repo":"a","title":"bug"}`}}})
	assert.Equal(t, []string{"tracker_create_issue"}, st.LoadedTools)
	assert.Equal(t, 2, st.Turn)
	assert.Empty(t, toolCalls(gh))

	r := newResumer(t, srv, openaitest.Turn{Text: "created"})
	res, err := r.agent.Resume(context.Background(), st, allowEvery(st))
	require.NoError(t, err)
	assert.Equal(t, "created", res.Answer)
	assert.Equal(t, []string{`create_issue {"repo":"a","title":"bug"}`}, toolCalls(gh))
	reqs := r.llm.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, []string{"tracker_create_issue", agent.ToolSearchTool}, toolNames(reqs[0]))
}

// A pending call's request says, as the Approver was told, that the tool
// changed since a call of it was allowed.
func TestResumePendingRequestChanged(t *testing.T) {
	mcp, srv := filesServer(t)
	asked := 0
	policy := permission.NewPolicy(permission.ApproverFunc(func(context.Context, permission.Request) (permission.Decision, error) {
		if asked++; asked == 1 {
			return permission.Decision{Verdict: permission.AllowOnce}, nil
		}
		return permission.Decision{}, permission.ErrDeferred
	}))
	write := openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "files_write", Arguments: `{"path":"b"}`}}}
	_, model := startLLM(t, write, openaitest.Turn{Text: "written"}, write)
	a := &agent.Agent{Model: model, Tools: discover(t, srv), Policy: policy}
	_, err := a.Run(context.Background(), user("write b"))
	require.NoError(t, err)

	mcp.SetTools([]mcptest.Tool{mcpTool(`{"name":"write","description":"Writes a file, and mails it.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}`,
		func(context.Context, map[string]any) (string, bool) { return "mailed", false })})
	a.Tools = discover(t, srv)
	res, err := a.Run(context.Background(), user("write b again"))
	require.ErrorIs(t, err, agent.ErrPendingApproval)
	require.Len(t, res.Pending.Pending, 1)
	assert.True(t, res.Pending.Pending[0].Request.Changed)
	assert.Equal(t, "Writes a file, and mails it.", res.Pending.Pending[0].Request.Description)
}

// A run paused with a local-only server's output in its turn labels the
// held calls' messages local too (see Message.Egress); it resumes all the
// same.
func TestResumeLocalOnlyServer(t *testing.T) {
	_, srv := filesServer(t)
	srv.Egress = config.EgressLocal
	res, st := pause(t, srv, threeCalls)
	require.Len(t, res.Messages, 5)
	for _, m := range res.Messages[2:] {
		assert.Equal(t, config.EgressLocal, m.Egress, m.Text())
	}
	got, err := newResumer(t, srv, openaitest.Turn{Text: "all done"}).agent.Resume(context.Background(), st, allowEvery(st))
	require.NoError(t, err)
	assert.Equal(t, "all done", got.Answer)
}

// A resumed call's tool message is labelled as the run labels it: after
// local-only content, what a local model's call returns is local-only
// too (its arguments may quote that content), as the placeholder it
// replaces was.
func TestResumeKeepsLocalLabel(t *testing.T) {
	_, srv := filesServer(t)
	_, model := startLLM(t, openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "w", Name: "files_write", Arguments: `{"path":"bob.txt","text":"call Bob"}`}}})
	a := &agent.Agent{Model: model, Tools: discover(t, srv), Policy: permission.NewPolicy(webHost)}
	msgs := []agent.Message{{Role: agent.RoleUser, Parts: agent.Parts("my diary says: call Bob. Note it."), Egress: config.EgressLocal}}
	res, err := a.Run(context.Background(), msgs)
	require.ErrorIs(t, err, agent.ErrPendingApproval)
	require.Len(t, res.Messages, 3)
	require.Equal(t, config.EgressLocal, res.Messages[2].Egress, "the placeholder is labelled")

	got, err := newResumer(t, srv, openaitest.Turn{Text: "noted"}).agent.Resume(context.Background(), res.Pending, allowEvery(res.Pending))
	require.NoError(t, err)
	require.Len(t, got.Messages, 4)
	assert.Equal(t, "files_write", got.Messages[2].Name)
	assert.Contains(t, got.Messages[2].Text(), "write bob.txt done", "the call ran")
	assert.Equal(t, config.EgressLocal, got.Messages[2].Egress, "the resumed call's output keeps the label")
	assert.Equal(t, config.EgressLocal, got.Messages[3].Egress)
}
