package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// CodeURLElicitationRequired is the error of a 2025-11-25 server that
// needs the user to open a URL before it runs the request; its data lists
// the URL-mode elicitations. With Options.ElicitURL the client handles it
// (see there); otherwise the *RPCError reaches the caller.
const CodeURLElicitationRequired = -32042

// maxRequiredElicitations bounds the URLs one such error may ask for.
const maxRequiredElicitations = 8

// elicitRequired shows the URLs a URLElicitationRequired error (cause)
// lists through the Elicit handler, then waits for the server to say each
// interaction completed (Options.ElicitCompleteWait). It returns nil when
// the request may be sent again, or an error that wraps cause when the
// user did not consent.
func (c *Client) elicitRequired(ctx context.Context, cause error) error {
	var rpc *RPCError
	if !errors.As(cause, &rpc) {
		return cause
	}
	var data struct {
		Elicitations []ElicitRequest `json:"elicitations"`
	}
	if err := json.Unmarshal(rpc.Data, &data); err != nil || len(data.Elicitations) == 0 {
		return fmt.Errorf("%w: url elicitation required, with no elicitations: %w", ErrProtocol, cause)
	}
	if len(data.Elicitations) > maxRequiredElicitations {
		return fmt.Errorf("%w: url elicitation required for more than %d urls: %w", ErrProtocol, maxRequiredElicitations, cause)
	}
	waits, err := c.awaitElicitations(data.Elicitations)
	if err != nil {
		return fmt.Errorf("%w: %w", err, cause)
	}
	defer c.forgetElicitations(data.Elicitations)
	for i := range data.Elicitations {
		req := &data.Elicitations[i]
		if req.Mode != "url" {
			return fmt.Errorf("%w: url elicitation required in mode %q: %w", ErrProtocol, clip(req.Mode, 40), cause)
		}
		res, err := c.elicit(ctx, req)
		if err != nil {
			return fmt.Errorf("mcp: %s: url elicitation: %w", rpc.Method, err)
		}
		if res.Action != "accept" {
			return fmt.Errorf("mcp: %s: the user answered %s to the url the server needs: %w", rpc.Method, res.Action, cause)
		}
	}
	if c.opts.ElicitCompleteWait < 0 {
		return nil
	}
	timer := time.NewTimer(c.opts.ElicitCompleteWait)
	defer timer.Stop()
	for i, ch := range waits {
		select {
		case <-ch:
		case <-timer.C:
			c.log.Info("mcp: no completion of the url elicitation came; sending the request again", "method", rpc.Method)
			return nil
		case <-ctx.Done():
			return fmt.Errorf("mcp: %s: waiting for url elicitation %q to complete: %w", rpc.Method, clip(data.Elicitations[i].ElicitationID, 64), ctx.Err())
		}
	}
	return nil
}

// awaitElicitations registers the ids of reqs, before the user is shown
// any, so that a completion arriving at once is not missed.
func (c *Client) awaitElicitations(reqs []ElicitRequest) ([]chan struct{}, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.elicitWaits == nil {
		c.elicitWaits = map[string]chan struct{}{}
	}
	waits := make([]chan struct{}, 0, len(reqs))
	for i, req := range reqs {
		if _, dup := c.elicitWaits[req.ElicitationID]; dup || req.ElicitationID == "" {
			for _, r := range reqs[:i] {
				delete(c.elicitWaits, r.ElicitationID)
			}
			return nil, fmt.Errorf("%w: url elicitation id %q missing or already awaited", ErrProtocol, clip(req.ElicitationID, 64))
		}
		ch := make(chan struct{})
		c.elicitWaits[req.ElicitationID] = ch
		waits = append(waits, ch)
	}
	return waits, nil
}

// forgetElicitations drops the waits of reqs.
func (c *Client) forgetElicitations(reqs []ElicitRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range reqs {
		delete(c.elicitWaits, r.ElicitationID)
	}
}

// elicitationComplete handles notifications/elicitation/complete: it
// releases a retry waiting for the id and tells the host.
func (c *Client) elicitationComplete(params json.RawMessage) {
	var p struct {
		ID string `json:"elicitationId"`
	}
	if json.Unmarshal(params, &p) != nil || p.ID == "" {
		c.log.Warn("mcp: malformed elicitation/complete notification")
		return
	}
	c.mu.Lock()
	if ch, ok := c.elicitWaits[p.ID]; ok {
		close(ch)
		delete(c.elicitWaits, p.ID)
	}
	c.mu.Unlock()
	if c.opts.OnElicitationComplete != nil {
		c.opts.OnElicitationComplete(p.ID)
	}
}

// NotifyRootsChanged tells a legacy server that the roots Options.Roots
// lists changed (notifications/roots/list_changed), which the client
// declared it would do; the server then asks again. The 2026-07-28 era has
// no such notification (a server asks for the roots with each request
// that needs them): it returns nil there. It fails when Options.Roots is
// nil.
func (c *Client) NotifyRootsChanged(ctx context.Context) error {
	if c.opts.Roots == nil {
		return errors.New("mcp: roots changed, but the client offers no roots")
	}
	if c.era() != EraLegacy {
		return nil
	}
	if err := c.conn.notify(ctx, "notifications/roots/list_changed", nil); err != nil {
		return fmt.Errorf("mcp: notifications/roots/list_changed: %w", err)
	}
	return nil
}
