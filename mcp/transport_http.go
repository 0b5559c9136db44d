package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
	"git.rickub.com/bots-garden/mini-me/sse"
)

// Limits of the Streamable HTTP transport.
const (
	// maxResumes bounds the GET reconnections of one legacy response
	// stream that bring no new event, and maxReissues the modern re-issues
	// of one request.
	maxResumes  = 5
	maxReissues = 1
	// defaultRetry is the wait before resuming a legacy stream that named
	// no retry delay.
	defaultRetry = 500 * time.Millisecond
	// notifyTimeout bounds a cancellation or response POST made after the
	// caller's context ended.
	notifyTimeout = 2 * time.Second
	// errorBodyLimit is how much of a non-JSON-RPC body an error quotes.
	errorBodyLimit = 200
	// handlerGrace bounds how long close waits for the host's callbacks
	// and handlers, which were told to stop, before abandoning them.
	handlerGrace = time.Second
)

// httpConn speaks Streamable HTTP, in either era. Each request is its own
// POST and its response is read on the caller's goroutine.
type httpConn struct {
	c         *Client
	url       *url.URL
	hc        *http.Client
	own       *http.Transport // ours to close, nil for a host's client
	static    http.Header
	authName  string
	authValue string
	token     string // for redaction only
	creds     Credentials
	maxSize   int64
	pinSSE    bool // speak only the deprecated HTTP+SSE transport
	// notes and answers keep the host's code off the goroutines that read
	// responses: a slow callback or handler never stalls a call.
	notes   *notifyQueue
	answers handlers
	// decoders keeps the SSE decoders of finished response streams
	// (*sse.Decoder, made with maxSize) for the next ones.
	decoders sync.Pool

	mu      sync.Mutex
	modern  bool
	version string // MCP-Protocol-Version header, "" before initialize
	session string
	// sessionHdr is the Mcp-Session-Id value for session, made once per
	// session rather than per request.
	sessionHdr []string

	// The server stream, for server messages outside any request: the
	// legacy GET stream or the modern subscriptions/listen one. None
	// starts once closed is set.
	stopListen context.CancelFunc
	listenDone chan struct{}
	closed     bool
	elsewhere  map[int64]elsewhere // legacy calls reading a response stream
	sent       []string            // the Credentials' recent tokens, for redaction
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// pooledBody is the largest body of unknown length read straight into a
// pooled buffer; the rest of a larger one is gathered in chunks (see
// gather). It is also the largest buffer kept in the pool.
const pooledBody = 1 << 20

// readBody reads a body of at most max bytes into buf; a larger one fails
// with errGatherLimit, having cost about max bytes. length is the body's
// Content-Length, or -1: a body of known length up to max is read into a
// buffer of that size, with no growing and no further copy.
func readBody(buf *bytes.Buffer, body io.Reader, length, max int64) error {
	if length >= 0 && length <= max {
		// ReadFrom wants MinRead bytes free to find the end without
		// growing the buffer; one byte over the length shows a body that
		// lies about it.
		buf.Grow(int(length) + bytes.MinRead)
		if _, err := buf.ReadFrom(io.LimitReader(body, length+1)); err != nil {
			return err
		}
		if int64(buf.Len()) > length {
			return fmt.Errorf("body longer than its Content-Length %d", length)
		}
		return nil
	}
	first := min(max, pooledBody)
	if _, err := buf.ReadFrom(io.LimitReader(body, first)); err != nil {
		return err
	}
	if int64(buf.Len()) < first {
		return nil
	}
	g := gather{max: max - first}
	defer g.release()
	if err := g.readFrom(body); err != nil {
		return err
	}
	buf.Grow(int(g.size))
	for _, c := range g.parts() {
		buf.Write(c)
	}
	return nil
}

func (h *httpConn) setProtocol(era Era, version string) {
	h.mu.Lock()
	var stop context.CancelFunc
	var done chan struct{}
	if h.modern && era == EraLegacy && !h.closed {
		// A fall back: the modern listen stream has no place in a legacy
		// session; it ends, and the session's GET stream may take its place.
		stop, done = h.stopListen, h.listenDone
		h.stopListen, h.listenDone = nil, nil
	}
	h.modern, h.version = era == EraModern, version
	if era == EraLegacy && version == "" {
		h.session, h.sessionHdr = "", nil
	}
	h.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

func (h *httpConn) probeTimeout() time.Duration { return 0 }

func (h *httpConn) roundTrip(ctx context.Context, r *outgoing, result any) error {
	for reissue := 0; ; reissue++ {
		err := h.post(ctx, r, result)
		if err != nil && ctx.Err() != nil {
			// Whatever the stream did, the caller gave up first: net/http
			// closes the body on the context's end, and the read may fail
			// before readStream sees its own, derived context end.
			h.cancelled(r)
			return fmt.Errorf("mcp: %s: %w", r.method, ctx.Err())
		}
		if !errors.Is(err, errReissue) {
			return err
		}
		if !r.replay || reissue >= maxReissues {
			return fmt.Errorf("%w: %s: the request may have run and was not sent again", ErrStreamBroken, r.method)
		}
		// The request is lost with its stream; send it anew.
		r.id = h.c.nextID.Add(1)
	}
}

// errReissue says a response stream ended without a response, and without
// a way to resume it.
var errReissue = errors.New("mcp: stream ended, re-issue")

func (h *httpConn) post(ctx context.Context, r *outgoing, result any) error {
	body, err := encodeRequest(r.id, r.method, r.params)
	if err != nil {
		return fmt.Errorf("mcp: %s: encode request: %w", r.method, err)
	}
	req := h.newPost(ctx, body)
	session, modern := h.setHeaders(req, r)
	resp, err := h.do(req, r.method)
	if err != nil {
		var ae *AuthError
		if errors.As(err, &ae) {
			return err // it names the method already
		}
		return methodError(r.method, err)
	}
	defer closeBody(resp.Body)
	if r.method == "initialize" {
		if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
			h.mu.Lock()
			h.session, h.sessionHdr = s, []string{s}
			h.mu.Unlock()
		}
	}
	if resp.StatusCode == http.StatusAccepted {
		return fmt.Errorf("%w: %s: 202 Accepted where a response is due", ErrProtocol, r.method)
	}
	if session != "" && !modern && h.sessionLost(resp) {
		return errSessionGone
	}
	switch mediaType(resp) {
	case "application/json":
		return h.readJSON(resp, r, result)
	case "text/event-stream":
		if resp.StatusCode == http.StatusOK {
			return h.readStream(ctx, resp.Body, r, result, modern)
		}
	}
	return h.statusError(r.method, resp)
}

// sessionLost reports an answer to a request that carried a legacy
// session id saying the server does not know that session: a 404, as the
// spec has it, or a 400 whose body speaks of the session, as some servers
// answer after a restart. The body of another 400 is left readable.
func (h *httpConn) sessionLost(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusNotFound:
		return true
	case http.StatusBadRequest:
		head, _ := io.ReadAll(io.LimitReader(resp.Body, sessionSniff))
		resp.Body = readCloser{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
		return bytes.Contains(bytes.ToLower(head), []byte("session"))
	}
	return false
}

// sessionSniff is how much of a 400 body sessionLost reads.
const sessionSniff = 4 << 10

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}

// newPost makes a POST of body to the endpoint, without parsing its URL
// again.
func (h *httpConn) newPost(ctx context.Context, body []byte) *http.Request {
	u := *h.url
	req := &http.Request{
		Method: http.MethodPost, URL: &u, Host: u.Host,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
		GetBody: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil },
	}
	return req.WithContext(ctx)
}

// setHeaders sets the headers of a POST and returns the session id and era
// it was sent with.
func (h *httpConn) setHeaders(req *http.Request, r *outgoing) (session string, modern bool) {
	hd := make(http.Header, 8+len(h.static)+len(r.headers))
	for k, v := range h.static {
		hd[k] = v
	}
	hd["Content-Type"] = postContentType
	hd["Accept"] = postAccept
	h.mu.Lock()
	session, modern, version, sessionHdr := h.session, h.modern, h.version, h.sessionHdr
	h.mu.Unlock()
	if r.method == "initialize" {
		session, version = "", "" // a new session starts bare
	}
	if version != "" {
		hd["Mcp-Protocol-Version"] = versionHeader(version)
	}
	if modern {
		hd["Mcp-Method"] = methodHeader(r.method)
		if r.name != "" {
			hd["Mcp-Name"] = []string{encodeHeaderValue(r.name)}
		}
		for _, p := range r.headers {
			hd.Set(p.name, p.value)
		}
	}
	if session != "" {
		hd["Mcp-Session-Id"] = sessionHdr
	}
	req.Header = hd
	return session, modern
}

// The values of the headers every POST carries, shared: neither net/http
// nor this package changes a header value in place.
var (
	postContentType = []string{"application/json"}
	postAccept      = []string{"application/json, text/event-stream"}
	versionHeaders  = map[string][]string{Version20260728: {Version20260728}, Version20251125: {Version20251125}}
)

// methodHeaders are the Mcp-Method values of the frequent requests.
var methodHeaders = map[string][]string{
	"tools/call": {"tools/call"}, "tools/list": {"tools/list"},
	"resources/read": {"resources/read"}, "resources/list": {"resources/list"},
	"prompts/get": {"prompts/get"}, "prompts/list": {"prompts/list"},
}

// methodHeader returns the Mcp-Method value for method.
func methodHeader(method string) []string {
	if v, ok := methodHeaders[method]; ok {
		return v
	}
	return []string{method}
}

// versionHeader returns the Mcp-Protocol-Version value for version.
func versionHeader(version string) []string {
	if v, ok := versionHeaders[version]; ok {
		return v
	}
	return []string{version}
}

// readJSON decodes a single JSON-RPC response body, in one pass, straight
// into result.
func (h *httpConn) readJSON(resp *http.Response, r *outgoing, result any) error {
	tooLarge := func() error {
		return fmt.Errorf("%w: %s: response over %d bytes", ErrTooLarge, r.method, h.maxSize)
	}
	if resp.ContentLength > h.maxSize {
		return tooLarge()
	}
	buf := bufPool.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 4*pooledBody { // a rare big body is not kept
			buf.Reset()
			bufPool.Put(buf)
		}
	}()
	if err := readBody(buf, resp.Body, resp.ContentLength, h.maxSize); err != nil {
		if errors.Is(err, errGatherLimit) {
			return tooLarge()
		}
		return fmt.Errorf("%w: %s: reading response: %w", ErrStreamBroken, r.method, h.redactErr(err))
	}
	r.size = buf.Len()
	msg := jsonrpc.Message{Result: result}
	if err := decodeMessage(buf.Bytes(), &msg); err != nil || msg.Check() != nil {
		if resp.StatusCode >= 400 {
			return h.httpError(r.method, resp.StatusCode, "application/json", buf.Bytes())
		}
		if err == nil {
			err = msg.Check()
		}
		return fmt.Errorf("%w: %s: malformed response: %w", ErrProtocol, r.method, err)
	}
	if msg.Error != nil {
		return h.reply(r.method, &msg)
	}
	if resp.StatusCode >= 300 {
		return h.httpError(r.method, resp.StatusCode, "application/json", buf.Bytes())
	}
	var id [20]byte // room for any int64: the id is compared without an allocation
	if !bytes.Equal(msg.ID, strconv.AppendInt(id[:0], r.id, 10)) || msg.Method != "" {
		return fmt.Errorf("%w: %s: response does not answer the request (id %s)", ErrProtocol, r.method, clip(msg.ID.String(), 40))
	}
	return h.reply(r.method, &msg)
}

// readStream reads an SSE response: notifications and (legacy) server
// requests until the response arrives. A legacy stream that ends early is
// resumed with GET and Last-Event-ID; a modern one is re-issued. A legacy
// response may also arrive on the GET stream: then the stream is abandoned
// and that response is used.
func (h *httpConn) readStream(ctx context.Context, body io.ReadCloser, r *outgoing, result any, modern bool) error {
	var other chan []byte
	if !modern {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		other = make(chan []byte, 1)
		h.mu.Lock()
		h.elsewhere[r.id] = elsewhere{other, cancel}
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			delete(h.elsewhere, r.id)
			h.mu.Unlock()
		}()
	}
	// finish ends the call with err, unless its response came on the GET
	// stream meanwhile (which also ended ctx): a response that came is
	// the call's outcome, whatever else ended.
	finish := func(err error) error {
		select {
		case data := <-other: // nil, never ready, in the modern era
			return h.decodeResponse(data, r, result)
		default:
			return err
		}
	}
	want := jsonrpc.Int(r.id)
	from := "" // the event id the current stream resumed from
	dec := h.responseDecoder()
	defer func() {
		dec.Reset(nil) // hold on to no body while pooled
		h.decoders.Put(dec)
	}()
	for resumes := 0; ; resumes++ {
		dec.Reset(body)
		done, err := h.events(ctx, dec, r, want, result, modern)
		if done && err == nil {
			return nil
		}
		if done || ctx.Err() != nil {
			return finish(err)
		}
		if errors.Is(err, sse.ErrEventTooLarge) {
			return fmt.Errorf("%w: %s: %w", ErrTooLarge, r.method, err)
		}
		if modern {
			h.c.log.Debug("mcp: response stream ended early", "method", r.method, "error", err)
			return errReissue
		}
		last := dec.LastEventID()
		if last != from {
			resumes = 0 // the stream moved on: a server polling, not failing
		}
		switch {
		case last == "":
			// Nothing to resume from: like a modern stream, the request
			// is lost with it, and re-issued if it is safe to repeat.
			h.c.log.Debug("mcp: response stream ended early, with no event id", "method", r.method, "error", err)
			return finish(errReissue)
		case resumes >= maxResumes:
			return finish(fmt.Errorf("%w: %s: %d resumptions from event %q brought nothing", ErrStreamBroken, r.method, resumes, clip(last, 40)))
		}
		from = last
		wait, ok := dec.Retry()
		if !ok {
			wait = defaultRetry
		}
		if err := sleep(ctx, wait); err != nil {
			return finish(err)
		}
		closeBody(body)
		if body, err = h.resume(ctx, last); err != nil {
			return finish(fmt.Errorf("%w: %s: %w", ErrStreamBroken, r.method, err))
		}
		defer closeBody(body)
	}
}

// responseDecoder returns a decoder for a response stream, one that an
// earlier response used if there is one: each is Reset to its stream.
func (h *httpConn) responseDecoder() *sse.Decoder {
	if dec, ok := h.decoders.Get().(*sse.Decoder); ok {
		return dec
	}
	return sse.NewDecoder(nil, &sse.Options{MaxEventSize: int(h.maxSize)})
}

// elsewhere is where the GET stream delivers a legacy call's response.
type elsewhere struct {
	data   chan []byte
	cancel context.CancelFunc
}

// decodeResponse decodes a response that arrived on another stream.
func (h *httpConn) decodeResponse(data []byte, r *outgoing, result any) error {
	r.size = len(data)
	msg := jsonrpc.Message{Result: result}
	if err := decodeMessage(data, &msg); err != nil {
		return fmt.Errorf("%w: %s: malformed response: %w", ErrProtocol, r.method, err)
	}
	return h.reply(r.method, &msg)
}

// reply checks a decoded response: a JSON-RPC error becomes an *RPCError,
// without the token should the server echo it, and a null result is a
// protocol error.
func (h *httpConn) reply(method string, msg *jsonrpc.Message) error {
	if msg.Error != nil {
		e := rpcError(method, msg.Error)
		e.Message = h.redact(e.Message)
		if e.Data != nil {
			e.Data = json.RawMessage(h.redact(string(e.Data)))
		}
		return e
	}
	if msg.Result == nil {
		return fmt.Errorf("%w: %s: response has a null result", ErrProtocol, method)
	}
	return nil
}

// events consumes a decoder's events; done says the response arrived (or a
// final error happened).
func (h *httpConn) events(ctx context.Context, dec *sse.Decoder, r *outgoing, want jsonrpc.ID, result any, modern bool) (done bool, err error) {
	// RawEvents: each event is decoded at once, and what the decoding
	// keeps (strings, raw params, ids) is copied by encoding/json, so the
	// decoder's reused buffer is all an event's data costs.
	for ev, err := range dec.RawEvents(ctx) {
		if err != nil {
			return false, err
		}
		if len(ev.Data) == 0 {
			continue // a priming event: only its id and retry matter
		}
		msg := jsonrpc.Message{Result: result}
		err := decodeMessage(ev.Data, &msg)
		if err == nil {
			err = msg.Check()
		}
		mine := msg.IsResponse() && bytes.Equal(msg.ID, want)
		if err != nil && (mine || !strayResult(err) || msg.Check() != nil) {
			return true, fmt.Errorf("%w: %s: malformed event: %w", ErrProtocol, r.method, err)
		}
		if !mine {
			// Decoded in place for speed: undo what it wrote, the result
			// of another request's response or a result member that a
			// notification or request should not have.
			reflect.ValueOf(result).Elem().SetZero()
		}
		switch {
		case mine:
			r.size = len(ev.Data)
			return true, h.reply(r.method, &msg)
		case msg.IsResponse():
			h.c.log.Debug("mcp: response to another request ignored", "id", msg.ID.String())
		case msg.IsNotification():
			if msg.Method == "notifications/subscriptions/acknowledged" {
				h.c.inForce()
			}
			h.notes.push(msg.Method, msg.Params)
		case modern:
			h.c.ignoredRequest(msg.Method)
		default:
			h.serve(ctx, msg.ID, msg.Method, msg.Params)
		}
	}
	return false, nil
}

// strayResult reports whether err, from decoding an event of a call's
// stream, is only that its result does not fit the call's result type:
// for another request's response, or a message that should have no
// result, that is no fault of the stream, and the event is skipped as if
// it fitted. (encoding/json decodes the rest of the message all the same.)
func strayResult(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te) && (te.Field == "result" || strings.HasPrefix(te.Field, "result."))
}

// resume reopens a legacy stream with GET and Last-Event-ID.
func (h *httpConn) resume(ctx context.Context, lastID string) (io.ReadCloser, error) {
	resp, err := h.get(ctx, lastID)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || mediaType(resp) != "text/event-stream" {
		defer closeBody(resp.Body)
		return nil, h.statusError("GET", resp)
	}
	return resp.Body, nil
}

// get opens a legacy GET stream.
func (h *httpConn) get(ctx context.Context, lastID string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url.String(), nil)
	if err != nil {
		return nil, err
	}
	h.legacyHeaders(req.Header)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	return h.do(req, "GET")
}

// legacyHeaders sets what every legacy message carries besides its body.
func (h *httpConn) legacyHeaders(hd http.Header) {
	for k, v := range h.static {
		hd[k] = v
	}
	h.mu.Lock()
	session, version := h.session, h.version
	h.mu.Unlock()
	if version != "" {
		hd.Set("Mcp-Protocol-Version", version)
	}
	if session != "" {
		hd.Set("Mcp-Session-Id", session)
	}
}

// serve answers a legacy server request on a goroutine of its own or,
// with Options.MaxServerRequests answers in progress, at once with an
// error, posted by the stream's reader itself: a server that floods
// requests is slowed down, not given a goroutine each.
func (h *httpConn) serve(ctx context.Context, id jsonrpc.ID, method string, params json.RawMessage) {
	if !h.answers.run(h.c.opts.MaxServerRequests, func() {
		res, rerr := h.c.serverRequest(ctx, method, params)
		h.answer(ctx, id, method, res, rerr)
	}) {
		h.answer(ctx, id, method, nil, h.c.busy(method))
	}
}

// answer posts the response to a legacy server request. The handler ran
// under ctx, the call's or the server stream's; the answer is sent even
// when ctx ended meanwhile (a call whose response came first), within
// notifyTimeout.
func (h *httpConn) answer(ctx context.Context, id jsonrpc.ID, method string, res any, rerr *jsonrpc.Error) {
	msg := jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: id, Result: res, Error: rerr}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), notifyTimeout)
	defer cancel()
	if err := h.send(sctx, msg); err != nil {
		h.c.log.Warn("mcp: answering a server request failed", "method", method, "error", err)
	}
}

// notify posts a notification; the server answers 202.
func (h *httpConn) notify(ctx context.Context, method string, params any) error {
	return h.send(ctx, jsonrpc.Request{JSONRPC: jsonrpc.Version, Method: method, Params: params})
}

// send posts a message that gets no response.
func (h *httpConn) send(ctx context.Context, msg any) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	h.legacyHeaders(req.Header)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := h.do(req, "notification")
	if err != nil {
		return err
	}
	defer closeBody(resp.Body)
	if resp.StatusCode/100 != 2 {
		if req.Header.Get("Mcp-Session-Id") != "" && h.sessionLost(resp) {
			return errSessionGone
		}
		return h.statusError("notification", resp)
	}
	return nil
}

// cancelled tells a legacy server that a request was abandoned. Modern
// servers learn it from the closed stream.
func (h *httpConn) cancelled(r *outgoing) {
	h.mu.Lock()
	modern := h.modern
	h.mu.Unlock()
	if modern || r.method == "initialize" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	params := struct {
		RequestID jsonrpc.ID `json:"requestId"`
		Reason    string     `json:"reason"`
	}{jsonrpc.Int(r.id), "cancelled by the client"}
	if err := h.notify(ctx, "notifications/cancelled", params); err != nil {
		h.c.log.Debug("mcp: cancellation not delivered", "error", err)
	}
}

// listen opens the legacy GET stream once a session exists, for the
// requests and notifications a server sends outside any request. It runs on
// its own goroutine until close, reconnecting with backoff; its failures
// never touch calls. A 405 means the server offers no such stream.
func (h *httpConn) listen() {
	ready := make(chan struct{})
	if !h.background(func(ctx context.Context) { h.listenLoop(ctx, ready) }) {
		return
	}
	// Servers send on the stream only once it is open: wait for the
	// first answer, briefly, so that nothing sent after Connect is lost.
	t := time.NewTimer(listenReadyWait)
	defer t.Stop()
	select {
	case <-ready:
	case <-t.C:
	}
}

// subscribe opens a 2026-07-28 subscriptions/listen stream for tool list
// changes, on its own goroutine until close. A stream that drops is opened
// again with backoff; since nothing is replayed, the host is then told to
// re-fetch. A server that refuses the method is left alone.
//
// It returns once the server acknowledged the stream, or refused it, or
// after listenReadyWait: a listing after that cannot miss a change. (One
// that began earlier is redone when the acknowledgement comes.)
func (h *httpConn) subscribe(meta json.RawMessage) {
	first := make(chan struct{})
	end := sync.OnceFunc(func() { close(first) })
	if !h.background(func(ctx context.Context) { h.subscribeLoop(ctx, meta, end) }) {
		return
	}
	t := time.NewTimer(listenReadyWait)
	defer t.Stop()
	select {
	case <-h.c.inForced:
	case <-first:
	case <-t.C:
	}
}

// background starts the connection's one server stream on a goroutine that
// close stops and waits for. It reports false when one already runs.
func (h *httpConn) background(run func(context.Context)) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopListen != nil || h.closed {
		return false
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	h.stopListen, h.listenDone = stop, done
	go func() {
		defer close(done)
		run(ctx)
	}()
	return true
}

type listenParams struct {
	Meta          json.RawMessage `json:"_meta"`
	Notifications struct {
		ToolsListChanged      bool     `json:"toolsListChanged"`
		ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
		PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
		ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	} `json:"notifications"`
}

// subscribeLoop keeps the listen stream open; ended is called when the
// first attempt ends.
func (h *httpConn) subscribeLoop(ctx context.Context, meta json.RawMessage, ended func()) {
	defer ended()
	p := h.c.listenFilter(meta)
	var b backoff
	for {
		if sleep(ctx, b.wait) != nil {
			return
		}
		opened := time.Now()
		var res json.RawMessage
		err := h.post(ctx, &outgoing{id: h.c.nextID.Add(1), method: "subscriptions/listen", params: &p}, &res)
		ended()
		if ctx.Err() != nil {
			return
		}
		var rpc *RPCError
		if errors.As(err, &rpc) {
			h.c.log.Debug("mcp: subscriptions/listen refused", "error", err)
			return
		}
		b.next(opened)
		h.c.log.Debug("mcp: listen stream ended", "error", err, "retry in", b.wait)
	}
}

// backoff paces the reopening of a server stream: at once after a stream
// that lived, then doubling up to 30 s while streams fail or end at once.
type backoff struct {
	wait time.Duration
}

// next sets the wait after a stream opened at opened has ended.
func (b *backoff) next(opened time.Time) {
	if time.Since(opened) >= minStreamLife {
		b.wait = 0
		return
	}
	b.wait = min(max(2*b.wait, defaultRetry), maxStreamWait)
}

// minStreamLife and maxStreamWait shape the backoff of server streams.
const (
	minStreamLife = 5 * time.Second
	maxStreamWait = 30 * time.Second
)

// listenReadyWait bounds how long Connect waits for the GET stream.
const listenReadyWait = 2 * time.Second

func (h *httpConn) listenLoop(ctx context.Context, ready chan struct{}) {
	var once sync.Once
	defer once.Do(func() { close(ready) })
	var b backoff
	lastID := ""
	for {
		if sleep(ctx, b.wait) != nil {
			return
		}
		opened, named := time.Now(), false
		resp, err := h.get(ctx, lastID)
		once.Do(func() { close(ready) })
		if ctx.Err() != nil {
			if err == nil {
				closeBody(resp.Body)
			}
			return
		}
		if err == nil && resp.StatusCode == http.StatusMethodNotAllowed {
			closeBody(resp.Body)
			return // the server offers no such stream
		}
		if err == nil && resp.StatusCode == http.StatusOK && mediaType(resp) == "text/event-stream" {
			dec := sse.NewDecoder(resp.Body, &sse.Options{MaxEventSize: int(h.maxSize)})
			for ev, err := range dec.Events(ctx) {
				if err != nil || ev.Data == "" {
					continue
				}
				h.dispatchListened(ctx, []byte(ev.Data))
			}
			lastID = dec.LastEventID()
			if d, ok := dec.Retry(); ok {
				b.wait, named = d, true
			}
		} else if err == nil {
			err = h.statusError("GET", resp)
		}
		if resp != nil {
			closeBody(resp.Body)
		}
		if named && err == nil {
			continue // the server named its delay
		}
		b.next(opened)
		h.c.log.Debug("mcp: server stream ended", "error", err, "retry in", b.wait)
	}
}

// dispatchListened handles one message of the GET stream.
func (h *httpConn) dispatchListened(ctx context.Context, data []byte) {
	var raw json.RawMessage
	msg := jsonrpc.Message{Result: &raw}
	if err := json.Unmarshal(data, &msg); err != nil || msg.Check() != nil {
		h.c.log.Warn("mcp: malformed message on the server stream")
		return
	}
	switch {
	case msg.IsResponse():
		id, err := strconv.ParseInt(string(msg.ID), 10, 64)
		h.mu.Lock()
		to, ok := h.elsewhere[id]
		h.mu.Unlock()
		if err != nil || !ok {
			h.c.log.Debug("mcp: response to no pending request dropped", "id", msg.ID.String())
			return
		}
		select {
		case to.data <- data:
		default:
		}
		to.cancel()
	case msg.IsNotification():
		h.notes.push(msg.Method, msg.Params)
	default:
		h.serve(ctx, msg.ID, msg.Method, msg.Params)
	}
}

// close stops the server stream, deletes a legacy session (405 means the
// server keeps it), waits for the host's callbacks and handlers until ctx
// is done, and releases our idle connections.
func (h *httpConn) close(ctx context.Context) error {
	defer func() {
		gctx, cancel := context.WithTimeout(ctx, handlerGrace)
		defer cancel()
		h.answers.wait(gctx, h.c.log)
		h.notes.close(gctx)
		h.closeIdle()
	}()
	h.mu.Lock()
	h.closed = true
	session, stop, done := h.session, h.stopListen, h.listenDone
	h.mu.Unlock()
	if stop != nil {
		stop() // the stream's goroutine runs no host code: it ends at once
		<-done
	}
	if session == "" {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, h.url.String(), nil)
	if err != nil {
		return err
	}
	h.legacyHeaders(req.Header)
	resp, err := h.do(req, "DELETE")
	if err != nil {
		return fmt.Errorf("mcp: closing session: %w", err)
	}
	closeBody(resp.Body)
	return nil
}

// statusError describes a response that is not a usable JSON-RPC answer.
func (h *httpConn) statusError(method string, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
	return h.httpError(method, resp.StatusCode, mediaType(resp), b)
}

func (h *httpConn) httpError(method string, status int, ct string, body []byte) error {
	return &HTTPError{Method: method, StatusCode: status, ContentType: ct, Body: h.redact(clip(string(body), errorBodyLimit))}
}

// redact removes the tokens from text a server or the network produced.
func (h *httpConn) redact(s string) string {
	for _, t := range h.secrets() {
		s = strings.ReplaceAll(s, t, "[redacted]")
	}
	return s
}

// redactErr removes the token from an error of the HTTP client, keeping
// what errors.Is finds in it, and classifies it (see netError).
func (h *httpConn) redactErr(err error) error {
	err = netError(err)
	msg := err.Error()
	if h.redact(msg) == msg {
		return err
	}
	return &redacted{msg: h.redact(msg), err: err}
}

// mediaType returns the response's media type, lower case, without
// parameters.
func mediaType(resp *http.Response) string {
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		return ""
	}
	// The two types a response may have, without ParseMediaType's map.
	if t, _, _ := strings.Cut(ct, ";"); strings.EqualFold(strings.TrimSpace(t), "application/json") {
		return "application/json"
	} else if strings.EqualFold(strings.TrimSpace(t), "text/event-stream") {
		return "text/event-stream"
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(strings.Split(ct, ";")[0]))
	}
	return mt
}

// closeBody drains a little of the body, so the connection can be reused,
// and closes it.
func closeBody(b io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, b, 4<<10)
	_ = b.Close()
}
