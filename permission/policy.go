package permission

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Policy decides whether a tool call may run: it applies the configured
// modes and rules, asks its [Approver] when they say so, remembers the
// session-wide allowances (AllowTool, AllowServer) it is given, and fails
// closed. It is the front end the agent calls, once per tool call, before
// the call is made.
//
// A call is settled by the first of these that applies:
//
//  1. ctx is already done: denied.
//  2. The tool's definition changed since a call of it was last allowed (and
//     WithConfirmChanged is on, the default): asked, with Request.Changed set;
//     an AllowTool allowance for the tool is dropped first.
//  3. The tool, or its server, was allowed for the session: allowed.
//  4. The server's mode is ModeAuto and the tool is not declared destructive
//     (or WithConfirmDestructive is off for the server): allowed.
//  5. Otherwise: asked.
//
// Asking fails closed: an Approver error, an expired WithTimeout, or a done
// ctx denies the call, with a Reason for the model and a non-nil error. An
// Approver that defers ([ErrDeferred]) gets the same denial, with an error
// matching ErrDeferred: a caller that can wait for the answer gives it
// later to [Policy.Answer]. A
// Policy never allows a call nobody approved, except as its modes say.
//
// Session allowances and remembered definitions live as long as the Policy:
// one Policy is one session. Memory grows with the number of distinct tools
// allowed (about a hundred bytes each) and is never released.
//
// A Policy is safe for concurrent use. Concurrent checks may ask the Approver
// concurrently; an allowance given to one applies to the checks that start
// after it. Create a Policy with [NewPolicy]; the zero Policy asks no one and
// so denies every call.
type Policy struct {
	approver                 Approver
	mode                     Mode
	serverModes              map[string]Mode
	samplingMode             Mode
	serverSamplingModes      map[string]Mode
	confirmDestructive       bool
	serverConfirmDestructive map[string]bool
	confirmChanged           bool
	timeout                  time.Duration
	audit                    func(Event)

	mu      sync.Mutex
	tools   map[toolKey]toolState // tools a call of which was allowed
	servers map[string]bool       // servers allowed for the session
}

// toolKey is what an allowance is remembered by: a tool of a server, or
// (sampling true) the server's sampling, which never shares a key with a
// tool, whatever the tool's name.
type toolKey struct {
	server, tool string
	sampling     bool
}

// keyOf is the key of req.
func keyOf(req *Request) toolKey {
	if req.Sampling != nil {
		return toolKey{server: req.Server, tool: SamplingTool, sampling: true}
	}
	return toolKey{server: req.Server, tool: req.Tool}
}

type toolState struct {
	definition definition // the definition in force when a call was last allowed
	always     bool       // allowed for the session (AllowTool)
}

// NewPolicy returns a Policy that asks approver. A nil approver is treated
// like DenyAll: only what the modes allow without asking runs. Without
// options every server is in ModeAsk, the destructive-tool and changed-tool
// rules are on, and questions have no timeout of their own.
func NewPolicy(approver Approver, opts ...Option) *Policy {
	p := &Policy{
		approver:                 approver,
		serverModes:              make(map[string]Mode),
		serverSamplingModes:      make(map[string]Mode),
		confirmDestructive:       true,
		serverConfirmDestructive: make(map[string]bool),
		confirmChanged:           true,
		tools:                    make(map[toolKey]toolState),
		servers:                  make(map[string]bool),
	}
	for _, opt := range opts {
		if opt != nil {
			opt(p)
		}
	}
	return p
}

// Check decides whether the call described by req may run, asking the
// Approver if the rules say so; see [Policy] for the rules. It may block as
// long as the Approver does, and returns promptly once ctx is done (as long
// as the Approver honours ctx, which its contract requires).
//
// The Decision is always usable: when it denies, [Decision.DenialMessage]
// gives the tool result to send back to the model. The error is non-nil
// when no answer could be obtained; the Decision then denies, with a Reason
// that says why without the error's details. To tell the failures apart:
// ctx.Err() is non-nil when the caller's ctx ended; errors.Is(err,
// context.DeadlineExceeded) with a nil ctx.Err() means the question timed
// out (WithTimeout); errors.Is(err, ErrDeferred) means the Approver put off
// its answer; anything else is the Approver's own failure.
//
// # Failing closed
//
// A call runs only when an answer or a mode allows it. An Approver error, a
// question that outlives its [WithTimeout], or a cancelled context denies the
// call. A denial is not a crash: [Decision.DenialMessage] is the tool result
// the agent sends back to the model instead of running the tool. Every
// decision is reported to the host's audit function ([WithAudit], [Event]).
//
// An Approver that cannot answer now (the user is not on the page) returns
// [ErrDeferred]. Check denies, with an error matching it; the agent, which
// knows, stops the run with the call pending instead, and the answer given
// later goes to [Policy.Answer] (see agent.Agent.Resume).
func (p *Policy) Check(ctx context.Context, req Request) (Decision, error) {
	mode := p.modeFor(&req)
	d, src, err := p.decide(ctx, mode, &req)
	p.report(&req, mode, src, d, err)
	return d, err
}

// report sends the audit Event of one decision, if the host wants them.
func (p *Policy) report(req *Request, mode Mode, src Source, d Decision, err error) {
	if p.audit == nil {
		return
	}
	p.audit(Event{
		Time:         time.Now(),
		Server:       req.Server,
		Tool:         req.Tool,
		PrefixedName: req.PrefixedName,
		Mode:         mode,
		Source:       src,
		Verdict:      d.Verdict,
		Reason:       d.Reason,
		Changed:      req.Changed,
		Err:          err,
	})
}

func (p *Policy) decide(ctx context.Context, mode Mode, req *Request) (Decision, Source, error) {
	if err := ctx.Err(); err != nil {
		return Decision{Verdict: Deny, Reason: reasonCancelled}, SourceFailed,
			fmt.Errorf("permission: approving %s: %w", req.name(), err)
	}
	key := keyOf(req)
	written := fingerprintOf(req, req.InputSchema)

	p.mu.Lock()
	d, src, settled := p.settle(mode, req, key, written)
	if settled {
		p.record(key, req, written, d.Verdict)
	}
	p.mu.Unlock()
	if settled {
		return d, src, nil
	}
	return p.ask(ctx, *req, key, written)
}

// settle decides without asking, if the rules allow it; it sets req.Changed.
// p.mu must be held.
func (p *Policy) settle(mode Mode, req *Request, key toolKey, written fingerprint) (Decision, Source, bool) {
	st, known := p.tools[key]
	if known && !st.definition.matches(req, written) {
		req.Changed = true
	}
	if req.Changed && p.confirmChanged {
		if st.always {
			st.always = false
			p.tools[key] = st
		}
		return Decision{}, 0, false
	}
	switch {
	case st.always:
		return Decision{Verdict: AllowTool}, SourceRemembered, true
	case p.servers[req.Server] && req.Sampling == nil:
		return Decision{Verdict: AllowServer}, SourceRemembered, true
	case mode == ModeAuto && !(p.confirmsDestructive(req.Server) && req.Annotations.declaredDestructive()):
		return Decision{Verdict: AllowOnce}, SourceAuto, true
	}
	return Decision{}, 0, false
}

// record notes that req, whose definition fingerprint as written is written,
// was allowed with verdict v. p.mu must be held.
func (p *Policy) record(key toolKey, req *Request, written fingerprint, v Verdict) {
	st := p.tools[key]
	if st.definition.written != written {
		st.definition = definitionOf(req, written)
	}
	if v == AllowTool {
		st.always = true
	}
	p.tools[key] = st
	switch {
	case v == AllowServer && req.Sampling != nil:
		st.always = true // a server's sampling, not its tools
		p.tools[key] = st
	case v == AllowServer:
		p.servers[key.server] = true
	}
}

const (
	reasonCancelled = "the approval was cancelled"
	reasonDeferred  = "the approval was deferred"
)

// ask asks the Approver, failing closed, and remembers what it allowed.
func (p *Policy) ask(ctx context.Context, req Request, key toolKey, written fingerprint) (Decision, Source, error) {
	d, src, err := p.consult(ctx, req)
	if err != nil || !d.Allowed() {
		return d, src, err
	}
	p.mu.Lock()
	p.record(key, &req, written, d.Verdict)
	p.mu.Unlock()
	return d, src, nil
}

// consult asks the Approver about req, failing closed.
func (p *Policy) consult(ctx context.Context, req Request) (Decision, Source, error) {
	approver := p.approver
	if approver == nil {
		approver = DenyAll{Reason: "no approver is configured"}
	}
	actx := ctx
	if p.timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	d, err := approver.Approve(actx, req)
	if err == nil {
		err = actx.Err() // an answer given after ctx ended is no answer
	}
	if errors.Is(err, ErrDeferred) && actx.Err() == nil {
		return Decision{Verdict: Deny, Reason: reasonDeferred}, SourceDeferred, &DeferredError{Request: req, Err: err}
	}
	if err != nil {
		reason := "the approval could not be obtained"
		switch {
		case ctx.Err() != nil:
			reason = reasonCancelled
		case actx.Err() != nil:
			reason = "no answer within " + p.timeout.String()
		}
		return Decision{Verdict: Deny, Reason: reason}, SourceFailed,
			fmt.Errorf("permission: approving %s: %w", req.name(), err)
	}
	if !d.Allowed() {
		return Decision{Verdict: Deny, Reason: d.Reason}, SourceAsked, nil
	}
	return d, SourceAsked, nil
}

// Answer settles a call whose approval the Approver deferred
// ([ErrDeferred]): d is the answer it gave later, for req as it was asked.
// The Policy takes it as it takes an answer given within Check: an
// AllowTool or AllowServer answer is remembered for the rest of the
// session, one audit Event reports it (Source SourceAsked), and the
// returned Decision, which denies unless d allows, is the one to act on.
//
// Answer does not ask the Approver, nor apply the modes and rules: the
// question was already asked. It is safe for concurrent use.
func (p *Policy) Answer(req Request, d Decision) Decision {
	if d.Allowed() {
		written := fingerprintOf(&req, req.InputSchema)
		p.mu.Lock()
		p.record(keyOf(&req), &req, written, d.Verdict)
		p.mu.Unlock()
	} else {
		d = Decision{Verdict: Deny, Reason: d.Reason}
	}
	p.report(&req, p.modeFor(&req), SourceAsked, d, nil)
	return d
}

// modeFor is the mode that settles req: its server's sampling mode for a
// sampling question, its server's mode for a tool call.
func (p *Policy) modeFor(req *Request) Mode {
	if req.Sampling != nil {
		return modeOf(p.serverSamplingModes, p.samplingMode, req.Server)
	}
	return modeOf(p.serverModes, p.mode, req.Server)
}

// modeOf is server's mode in modes, else fallback: ModeAuto, or else
// ModeAsk (the zero and unknown modes ask).
func modeOf(modes map[string]Mode, fallback Mode, server string) Mode {
	m, ok := modes[server]
	if !ok {
		m = fallback
	}
	if m != ModeAuto {
		return ModeAsk
	}
	return m
}

func (p *Policy) confirmsDestructive(server string) bool {
	if on, ok := p.serverConfirmDestructive[server]; ok {
		return on
	}
	return p.confirmDestructive
}
