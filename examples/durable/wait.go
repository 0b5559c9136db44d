package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"git.rickub.com/bots-garden/mini-me/agent/temporal"
)

// approveWait bounds how long approve waits for a run to ask for an
// approval: a run just started asks once its model has answered, which
// a local model may take a minute to do.
const approveWait = 2 * time.Minute

// pollEvery is how often awaitPending asks: a query is answered, never
// pushed.
const pollEvery = 250 * time.Millisecond

// awaitPending returns run id's progress once a call waits for approval
// or the run has ended (Stop set, no call pending), whichever comes
// first; after wait without either, an error says that no call is
// pending yet. A run that does not exist is an error at once. While it
// waits, it says so once on out.
func awaitPending(ctx context.Context, c client.Client, id string, wait time.Duration, out io.Writer) (temporal.Progress, error) {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	var last error // the last query's error, if it came before the wait ended
	said := false
	for {
		p, err := progress(wctx, c, id)
		var notFound *serviceerror.NotFound
		switch {
		case err == nil && (len(p.Pending) > 0 || p.Stop != ""):
			return p, nil
		case errors.As(err, &notFound):
			return p, fmt.Errorf("run %s: %w", id, err)
		case err != nil && wctx.Err() == nil:
			last = err // a worker not yet there: asked again
		}
		if !said {
			fmt.Fprintf(out, "waiting for run %s to ask for an approval (at most %s)\n", id, wait)
			said = true
		}
		select {
		case <-tick.C:
			continue
		case <-wctx.Done():
		}
		switch {
		case ctx.Err() != nil:
			return p, ctx.Err()
		case last != nil:
			return p, fmt.Errorf("run %s: no call waits for approval after %s (the last query: %w); is a worker running?", id, wait, last)
		}
		return p, fmt.Errorf("run %s: no call waits for approval yet (waited %s); is a worker running? try again later", id, wait)
	}
}
