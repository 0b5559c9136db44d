package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Defaults of a [Retry] whose fields leave them zero.
const (
	// DefaultRetries is how many times a failed call is made again: two
	// rides out a server's restart or a short burst of rate limiting
	// without making a dead endpoint cost much.
	DefaultRetries = 2
	// DefaultRetryBackoff is the first wait before a call is made again,
	// when the failure asks for none; it doubles with each retry.
	DefaultRetryBackoff = time.Second
	// DefaultRetryMaxWait bounds one wait: a provider that asks for a
	// longer one gets its error returned instead, for the host (or a
	// Fallback around the Retry) to decide.
	DefaultRetryMaxWait = 30 * time.Second
)

// Retry is a [Model] that makes a failed call of Model again, after a
// wait: the failure's ModelError.RetryAfter when the provider asked for
// one, else Backoff, doubled at each retry. It retries what may pass (by
// default [Transient]: unreachable, overloaded, rate limited, a server
// failure), at most Retries times, and never a call that delivered part
// of its answer to onDelta. A wait is cut short by ctx.
//
// Its fields must be set before its first use and not changed after; a
// Retry is then safe for concurrent use if Model is.
type Retry struct {
	// Model is the model called; it is required.
	Model Model
	// Retries bounds the calls made again; zero means DefaultRetries,
	// negative none.
	Retries int
	// Backoff is the first wait when the failure asks for none; zero
	// means DefaultRetryBackoff.
	Backoff time.Duration
	// MaxWait bounds one wait; zero means DefaultRetryMaxWait.
	MaxWait time.Duration
	// When reports whether err, a failure of Model, is retried; nil means
	// [Transient].
	When func(err error) bool
	// Sleep waits for d or until ctx is done, returning ctx.Err() then;
	// nil means a timer. Tests set it to wait for nothing.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger receives a record of each retry; nil means none.
	Logger *slog.Logger
}

// Chat implements [Model]: it calls Model, again after a failure as the
// type's doc says, and returns the first reply or the last error.
func (r *Retry) Chat(ctx context.Context, req *ChatRequest, onDelta func(Delta)) (*Reply, error) {
	if r.Model == nil {
		return nil, errors.New("agent: Retry.Model is nil")
	}
	for attempt := 0; ; attempt++ {
		delivered := false
		fwd := onDelta
		if onDelta != nil {
			fwd = func(d Delta) { delivered = true; onDelta(d) }
		}
		reply, err := r.Model.Chat(ctx, req, fwd)
		if err == nil || ctx.Err() != nil || delivered {
			return reply, err
		}
		wait, ok := r.wait(err, attempt)
		if !ok {
			return nil, err
		}
		if r.Logger != nil {
			r.Logger.LogAttrs(ctx, slog.LevelInfo, "agent: retrying a model call",
				slog.String("error", err.Error()), slog.Duration("wait", wait), slog.Int("retry", attempt+1))
		}
		if serr := r.sleep(ctx, wait); serr != nil {
			return nil, fmt.Errorf("agent: waiting to retry after %w: %w", err, serr)
		}
	}
}

// wait says whether the call that failed with err, at attempt (from 0),
// is made again, and after how long.
func (r *Retry) wait(err error, attempt int) (time.Duration, bool) {
	retries := r.Retries
	if retries == 0 {
		retries = DefaultRetries
	}
	retry := Transient
	if r.When != nil {
		retry = r.When
	}
	if attempt >= retries || !retry(err) {
		return 0, false
	}
	var wait time.Duration
	var me *ModelError
	if errors.As(err, &me) && me.RetryAfter > 0 {
		wait = me.RetryAfter
	} else {
		wait = r.Backoff
		if wait <= 0 {
			wait = DefaultRetryBackoff
		}
		wait <<= min(attempt, 30)
	}
	limit := r.MaxWait
	if limit <= 0 {
		limit = DefaultRetryMaxWait
	}
	return wait, wait > 0 && wait <= limit
}

func (r *Retry) sleep(ctx context.Context, d time.Duration) error {
	if r.Sleep != nil {
		return r.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ModelInfo describes Model. It implements [DescribedModel].
func (r *Retry) ModelInfo() ModelInfo { return modelInfo(r.Model) }

// Capabilities are Model's. It implements [CapableModel].
func (r *Retry) Capabilities() Capabilities { return CapabilitiesOf(r.Model) }
