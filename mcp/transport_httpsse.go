package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
	"git.rickub.com/bots-garden/mini-me/sse"
)

// sseConn is the deprecated HTTP+SSE transport of 2024-11-05: one GET
// stream carries every server message; each client message is POSTed to
// the endpoint the stream names first.
type sseConn struct {
	h        *httpConn
	endpoint string
	mux      *mux
	stop     context.CancelFunc
	done     chan struct{}
}

// openHTTPSSE opens the GET stream and waits for its endpoint event.
func (h *httpConn) openHTTPSSE(ctx context.Context) (*sseConn, error) {
	sctx, stop := context.WithCancel(context.Background())
	unbind := context.AfterFunc(ctx, stop) // until the endpoint is known
	defer unbind()
	resp, err := h.get(sctx, "")
	if err != nil {
		stop()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || mediaType(resp) != "text/event-stream" {
		defer closeBody(resp.Body)
		stop()
		return nil, h.statusError("GET", resp)
	}
	s := &sseConn{h: h, stop: stop, done: make(chan struct{})}
	// The host's callbacks run on the HTTP connection's queue, not on
	// the reader.
	s.mux = newMux(h.c, func(ctx context.Context, msg jsonrpc.Response) error { return s.post(ctx, msg) }, h.notes.push, func() bool { return false })
	s.mux.redact = h.redact
	endpoint := make(chan string, 1)
	go s.read(sctx, resp, endpoint)
	select {
	case e, ok := <-endpoint:
		if !ok {
			s.close(context.Background())
			return nil, fmt.Errorf("%w: HTTP+SSE stream ended before its endpoint event", ErrProtocol)
		}
		u, err := h.url.Parse(e)
		if err != nil || u.Scheme != h.url.Scheme || u.Host != h.url.Host {
			s.close(context.Background())
			return nil, fmt.Errorf("%w: HTTP+SSE endpoint %q is not on the server's origin", ErrProtocol, clip(e, 80))
		}
		s.endpoint = u.String()
		return s, nil
	case <-ctx.Done():
		s.close(context.Background())
		return nil, ctx.Err()
	}
}

// read owns the GET stream until it ends or close stops it.
func (s *sseConn) read(ctx context.Context, resp *http.Response, endpoint chan<- string) {
	defer close(s.done)
	defer closeBody(resp.Body)
	dec := sse.NewDecoder(resp.Body, &sse.Options{MaxEventSize: int(s.h.maxSize)})
	first := true
	var err error
	for ev, e := range dec.Events(ctx) {
		if e != nil {
			err = e
			break
		}
		if first {
			if ev.Type != "endpoint" {
				err = fmt.Errorf("first event is %q, want endpoint", ev.Type)
				break
			}
			first = false
			endpoint <- ev.Data
			continue
		}
		if ev.Data == "" || ev.Type != "" && ev.Type != "message" {
			continue
		}
		if _, derr := s.mux.dispatch(ctx, []byte(ev.Data), nil); derr != nil {
			s.h.c.log.Warn("mcp: malformed message on the HTTP+SSE stream", "error", derr)
		}
	}
	if first {
		close(endpoint)
	}
	if err == nil {
		err = errors.New("stream closed")
	}
	s.mux.fail(fmt.Errorf("%w: HTTP+SSE: %w", ErrStreamBroken, err))
}

func (s *sseConn) roundTrip(ctx context.Context, r *outgoing, result any) error {
	ch, err := s.mux.register(r.id)
	if err != nil {
		return err
	}
	if err := s.post(ctx, jsonrpc.Request{JSONRPC: jsonrpc.Version, ID: jsonrpc.Int(r.id), Method: r.method, Params: r.params}); err != nil {
		s.mux.forget(r.id)
		if ctx.Err() != nil {
			// The server may have the request already and act on it
			// before its 202 would have come.
			s.cancelled(r)
			return fmt.Errorf("mcp: %s: %w", r.method, ctx.Err())
		}
		return fmt.Errorf("mcp: %s: %w", r.method, err)
	}
	err = s.mux.await(ctx, r, ch, result)
	if err != nil && ctx.Err() != nil {
		s.cancelled(r)
	}
	return err
}

// cancelled tells the server that a request was abandoned, within
// notifyTimeout; initialize is never cancelled.
func (s *sseConn) cancelled(r *outgoing) {
	if r.method == "initialize" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	_ = s.notify(ctx, "notifications/cancelled", map[string]any{"requestId": r.id, "reason": "cancelled by the client"})
}

func (s *sseConn) notify(ctx context.Context, method string, params any) error {
	return s.post(ctx, jsonrpc.Request{JSONRPC: jsonrpc.Version, Method: method, Params: params})
}

// post sends one message to the endpoint; the answer comes on the stream.
func (s *sseConn) post(ctx context.Context, msg any) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	s.h.legacyHeaders(req.Header)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.h.do(req, "POST")
	if err != nil {
		return err
	}
	defer closeBody(resp.Body)
	if resp.StatusCode/100 != 2 {
		return s.h.statusError("POST", resp)
	}
	return nil
}

func (s *sseConn) setProtocol(Era, string)     {}
func (s *sseConn) probeTimeout() time.Duration { return 0 }

func (s *sseConn) close(ctx context.Context) error {
	s.stop()
	<-s.done
	s.mux.answers.wait(ctx, s.h.c.log)
	s.h.notes.close(ctx)
	s.h.closeIdle()
	return nil
}
