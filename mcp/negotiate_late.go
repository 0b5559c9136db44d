package mcp

import (
	"context"
	"slices"
	"time"
)

// lateProbe is a server/discover probe in flight on a goroutine of its
// own, so that the negotiation may go on without its answer and still
// take that answer when it comes.
type lateProbe struct {
	done   chan struct{} // closed once res and err are set
	res    discoverResult
	err    error
	cancel context.CancelFunc
}

// startProbe sends the probe under ctx.
func (c *Client) startProbe(ctx context.Context) *lateProbe {
	ctx, cancel := context.WithCancel(ctx)
	p := &lateProbe{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(p.done)
		p.res, p.err = c.discover(ctx)
	}()
	return p
}

// within waits up to d for the answer (ctx's end ends the probe, so the
// wait too), and reports whether it came.
func (p *lateProbe) within(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		p.cancel()
		return true
	case <-t.C:
		return false
	}
}

// modern reports a modern answer; only once done is closed.
func (p *lateProbe) modern() bool {
	return p.err == nil && slices.Contains(p.res.SupportedVersions, Version20260728)
}

// stop gives the probe up and waits for its goroutine.
func (p *lateProbe) stop() {
	p.cancel()
	<-p.done
}

// initializeBeside runs the legacy handshake offering version while late,
// a probe that had no answer within the probe timeout, is still in
// flight: over stdio a slow server (one that downloads itself on first
// start) answers the probe late, and a modern one then refuses initialize,
// its era fixed by its first request. Whichever answer settles the era
// first wins. A modern answer to the probe makes the server modern at
// once: initialize's answer, if any, is dropped. An initialize that
// succeeds first makes it legacy: the probe's answer is dropped. When
// initialize fails, the probe's answer is still awaited up to the probe
// timeout again (a server that handles requests concurrently may answer
// out of order); without a modern answer by then, initialize's error
// stands.
func (c *Client) initializeBeside(ctx context.Context, version string, late *lateProbe) error {
	defer late.stop()
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-late.done:
			if late.modern() {
				cancel()
			}
		case <-ictx.Done():
		}
	}()
	err := c.initialize(ictx, version)
	if err == nil {
		return nil
	}
	if !late.within(c.conn.probeTimeout()) || !late.modern() {
		return err
	}
	c.log.Info("mcp: the server answered the server/discover probe late, as a 2026-07-28 server; initialize's answer dropped")
	c.adopt(late.res)
	return nil
}
