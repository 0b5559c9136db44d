package permission

import "time"

// Option configures a [Policy]; see [NewPolicy]. Options are applied in
// order, so a later option overrides an earlier one on the same setting.
type Option func(*Policy)

// WithMode sets the mode of every server that has no mode of its own
// (WithServerMode). The default is [ModeAsk].
func WithMode(m Mode) Option {
	return func(p *Policy) { p.mode = m }
}

// WithServerMode sets the mode of one server, overriding WithMode for it.
func WithServerMode(server string, m Mode) Option {
	return func(p *Policy) { p.serverModes[server] = m }
}

// WithSamplingMode sets the mode of the sampling requests (a server asking
// for a completion by the host's model, [Sampling]) of every server that
// has no sampling mode of its own (WithServerSamplingMode). The default is
// [ModeAsk], whatever WithMode and WithServerMode say: a server trusted to
// run its tools without asking is not thereby trusted to spend the user's
// model (the configuration's "sampling: ask|auto").
func WithSamplingMode(m Mode) Option {
	return func(p *Policy) { p.samplingMode = m }
}

// WithServerSamplingMode sets the sampling mode of one server, overriding
// WithSamplingMode for it.
func WithServerSamplingMode(server string, m Mode) Option {
	return func(p *Policy) { p.serverSamplingModes[server] = m }
}

// WithConfirmDestructive turns on or off, for every server that has no
// setting of its own, the rule that asks about a destructive tool even in
// [ModeAuto]. It is on by default.
//
// The rule applies to a tool whose server declares destructiveHint true and
// does not declare readOnlyHint true. It deliberately ignores the MCP default
// (an absent destructiveHint means destructive): under that default every
// unannotated tool would be asked, and ModeAuto would mean nothing. The rule
// never makes the Policy ask less: in [ModeAsk] every call is asked anyway.
func WithConfirmDestructive(on bool) Option {
	return func(p *Policy) { p.confirmDestructive = on }
}

// WithServerConfirmDestructive turns the destructive-tool rule of
// WithConfirmDestructive on or off for one server, overriding the general
// setting for it.
func WithServerConfirmDestructive(server string, on bool) Option {
	return func(p *Policy) { p.serverConfirmDestructive[server] = on }
}

// WithConfirmChanged turns on or off the rule that asks again about a tool
// whose definition changed since a call of it was last allowed (see
// [Request].Changed), whatever the mode and even if the tool or its server
// was allowed for the session; the session allowance of the tool itself is
// dropped. It is on by default, and guards against a server that changes
// what a tool does after the user approved it. With no one to ask (a nil
// Approver, DenyAll), a tool that changes is denied for the rest of the
// session even in ModeAuto; a host that trusts its servers may turn the rule
// off.
func WithConfirmChanged(on bool) Option {
	return func(p *Policy) { p.confirmChanged = on }
}

// WithTimeout bounds the time the Approver has to answer one question. When it
// expires the call is denied with a reason saying so. Zero or less, the
// default, means no limit beyond the ctx given to Check.
func WithTimeout(d time.Duration) Option {
	return func(p *Policy) { p.timeout = d }
}

// WithAudit sets a function that receives every decision the Policy makes,
// one [Event] per call of Check, just before Check returns. It is called
// synchronously and possibly from several goroutines at once, so it must be
// safe for concurrent use and should return quickly.
func WithAudit(f func(Event)) Option {
	return func(p *Policy) { p.audit = f }
}
