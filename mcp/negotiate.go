package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// discoverResult is the answer to server/discover.
type discoverResult struct {
	complete
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      ServerCapabilities `json:"capabilities"`
	Instructions      string             `json:"instructions"`
	Meta              struct {
		ServerInfo Implementation `json:"io.modelcontextprotocol/serverInfo"`
	} `json:"_meta"`
	// ServerInfo is where some servers put it instead of _meta.
	ServerInfo Implementation `json:"serverInfo"`
}

// initializeResult is the answer to the legacy initialize request.
type initializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions"`
}

// negotiate finds the era: a modern server/discover probe first, then the
// legacy initialize handshake, then (HTTP only) the deprecated HTTP+SSE
// transport.
func (c *Client) negotiate(ctx context.Context) error {
	pin := c.opts.ProtocolVersion
	legacy := Version20251125
	h, _ := c.conn.(*httpConn)
	var late *lateProbe
	switch {
	case h != nil && h.pinSSE:
		if pin != "" && !isLegacyVersion(pin) {
			return fmt.Errorf("mcp: protocol version %q cannot be spoken over HTTP+SSE", pin)
		}
		return c.useHTTPSSE(ctx, h, cmp.Or(pin, Version20241105))
	case pin != "" && pin != Version20260728:
		if !isLegacyVersion(pin) {
			return fmt.Errorf("mcp: protocol version %q is not supported", pin)
		}
		legacy = pin
	default:
		modern, fallback, pending, err := c.probe(ctx)
		if err != nil {
			return err
		}
		if modern {
			return nil
		}
		if pin == Version20260728 {
			return fmt.Errorf("%w: server is not %s", ErrUnsupportedVersion, Version20260728)
		}
		if fallback != "" {
			legacy = fallback
		}
		late = pending
	}
	if late != nil {
		return c.initializeBeside(ctx, legacy, late)
	}
	err := c.initialize(ctx, legacy)
	if err == nil || h == nil || !c.tryHTTPSSE(err) {
		return err
	}
	c.log.Info("mcp: streamable HTTP refused, trying the deprecated HTTP+SSE transport", "error", err)
	if serr := c.useHTTPSSE(ctx, h, legacy); serr != nil {
		return fmt.Errorf("mcp: no transport worked: streamable HTTP: %w; HTTP+SSE: %w", err, serr)
	}
	return nil
}

// useHTTPSSE switches to the deprecated HTTP+SSE transport and initializes
// over it.
func (c *Client) useHTTPSSE(ctx context.Context, h *httpConn, version string) error {
	sc, err := h.openHTTPSSE(ctx)
	if err != nil {
		return err
	}
	c.conn = sc
	if err := c.initialize(ctx, version); err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultCloseTimeout)
		defer cancel()
		_ = sc.close(cctx)
		return err
	}
	return nil
}

// probe sends server/discover. It reports a modern server, or the legacy
// version to offer (empty for the default) when the server is not modern.
// Over stdio (a conn with a probe timeout), a probe that has no answer
// within the timeout is not given up: late is then the probe still in
// flight, for initializeBeside to race with initialize. A Client pinned
// to Version20260728 waits for the answer within ctx instead.
func (c *Client) probe(ctx context.Context) (modern bool, legacy string, late *lateProbe, err error) {
	c.proto.Store(&protoState{era: EraModern, version: Version20260728})
	c.conn.setProtocol(EraModern, Version20260728)
	var res discoverResult
	if d := c.conn.probeTimeout(); d > 0 && c.opts.ProtocolVersion == "" {
		p := c.startProbe(ctx)
		if !p.within(d) {
			c.log.Info("mcp: no answer to the server/discover probe yet; initializing, and taking a late answer if it comes first", "waited", d)
			return false, "", p, nil
		}
		res, err = p.res, p.err
	} else {
		res, err = c.discover(ctx)
	}
	modern, legacy, err = c.probed(ctx, res, err)
	return modern, legacy, nil, err
}

// discover sends server/discover, again when a busy server or proxy
// answers that it cannot take it now.
func (c *Client) discover(ctx context.Context) (discoverResult, error) {
	var res discoverResult
	var err error
	for attempt := 0; ; attempt++ {
		res = discoverResult{}
		r := c.request("server/discover", "", &metaParams{})
		r.probe = true
		err = c.call(ctx, r, &res)
		if !transient(err) || attempt == probeRetries {
			break
		}
		// A busy server or proxy: ask again before deciding anything.
		if sleep(ctx, time.Duration(attempt+1)*250*time.Millisecond) != nil {
			break
		}
	}
	if err == nil {
		err = res.check("server/discover")
	}
	return res, err
}

// probed reads the outcome of the probe, res or err: a modern server,
// whose era it adopts, or the legacy version to offer (empty for the
// default), or an error that ends the negotiation.
func (c *Client) probed(ctx context.Context, res discoverResult, err error) (modern bool, legacy string, _ error) {
	if err == nil {
		if slices.Contains(res.SupportedVersions, Version20260728) {
			c.adopt(res)
			return true, "", nil
		}
		// A discover answer that does not list our modern version: a
		// legacy server that happens to know the method, unless it lists
		// only versions we do not speak.
		legacy := newestLegacy(res.SupportedVersions)
		if legacy == "" && len(res.SupportedVersions) > 0 {
			return false, "", fmt.Errorf("%w: server supports %v", ErrUnsupportedVersion, res.SupportedVersions)
		}
		return false, legacy, nil
	}
	if ctx.Err() != nil {
		return false, "", err
	}
	if errors.Is(err, ErrAuth) {
		return false, "", err
	}
	var rpc *RPCError
	if errors.As(err, &rpc) {
		switch rpc.Code {
		case CodeUnsupportedVersion:
			supported, _ := supportedVersions(err)
			if v := newestLegacy(supported); v != "" {
				return false, v, nil
			}
			return false, "", fmt.Errorf("%w: server supports %v", ErrUnsupportedVersion, supported)
		case CodeMissingCapability, CodeHeaderMismatch:
			return false, "", err // a modern server refusing us: no fallback
		}
		return false, "", nil
	}
	var herr *HTTPError
	if errors.As(err, &herr) {
		if transient(err) || herr.StatusCode < 400 || herr.StatusCode >= 500 {
			// A server or proxy in trouble says nothing about the era.
			return false, "", err
		}
		return false, "", nil // a 4xx without a modern error: legacy
	}
	if errors.Is(err, ErrProtocol) {
		return false, "", nil // not a modern answer: legacy
	}
	return false, "", err
}

// adopt makes the era modern with what the server/discover answer res
// says, and subscribes to the list changes the host watches.
func (c *Client) adopt(res discoverResult) {
	c.conn.setProtocol(EraModern, Version20260728)
	info := res.Meta.ServerInfo
	if info.Name == "" {
		info = res.ServerInfo
	}
	c.proto.Store(&protoState{era: EraModern, version: Version20260728, serverInfo: info,
		capabilities: res.Capabilities, instructions: res.Instructions})
	if s, ok := c.conn.(interface{ subscribe(json.RawMessage) }); ok && (c.opts.OnToolsChanged != nil &&
		res.Capabilities.Tools != nil && res.Capabilities.Tools.ListChanged || c.watchesResources(res.Capabilities) || c.watchesPrompts(res.Capabilities)) {
		s.subscribe(c.meta)
	}
}

// probeRetries is how many times a probe answered by a busy server is sent
// again.
const probeRetries = 2

// transient reports an HTTP answer that may differ if asked again.
func transient(err error) bool {
	var herr *HTTPError
	if !errors.As(err, &herr) {
		return false
	}
	switch herr.StatusCode {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// newestLegacy picks the newest legacy version in list, or "".
func newestLegacy(list []string) string {
	for _, v := range legacyVersions {
		if slices.Contains(list, v) {
			return v
		}
	}
	return ""
}

// initialize runs the legacy handshake offering version and records what
// the server said.
func (c *Client) initialize(ctx context.Context, version string) error {
	c.proto.Store(&protoState{era: EraLegacy, version: version})
	c.conn.setProtocol(EraLegacy, "")
	res, err := c.handshake(ctx, version)
	if err != nil {
		return err
	}
	c.proto.Store(&protoState{era: EraLegacy, version: res.ProtocolVersion, serverInfo: res.ServerInfo,
		capabilities: res.Capabilities, instructions: res.Instructions})
	return nil
}

// handshake sends initialize and notifications/initialized, which starts
// a new session; until it succeeds, other requests go on with the old one.
// A session lost between the two is started again, once.
func (c *Client) handshake(ctx context.Context, version string) (*initializeResult, error) {
	res, err := c.handshakeOnce(ctx, version)
	if errors.Is(err, errSessionGone) {
		c.log.Info("mcp: session lost during initialize, starting a new one")
		res, err = c.handshakeOnce(ctx, version)
	}
	if errors.Is(err, errSessionGone) {
		return nil, fmt.Errorf("%w: the server lost each new session during initialize", ErrSessionExpired)
	}
	return res, err
}

func (c *Client) handshakeOnce(ctx context.Context, version string) (*initializeResult, error) {
	params := struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      Implementation  `json:"clientInfo"`
	}{version, c.capabilitiesJSON(true), c.opts.ClientInfo}
	var res initializeResult
	r := &outgoing{id: c.nextID.Add(1), method: "initialize", params: params}
	if err := c.tracedRoundTrip(ctx, r, &res); err != nil {
		return nil, err
	}
	if !isLegacyVersion(res.ProtocolVersion) {
		return nil, fmt.Errorf("%w: server answered initialize with version %q", ErrUnsupportedVersion, res.ProtocolVersion)
	}
	c.conn.setProtocol(EraLegacy, res.ProtocolVersion)
	if err := c.conn.notify(ctx, "notifications/initialized", nil); err != nil {
		return nil, err
	}
	if l, ok := c.conn.(interface{ listen() }); ok {
		l.listen()
	}
	return &res, nil
}

// tryHTTPSSE reports whether a failed initialize POST looks like a server
// that only has the deprecated HTTP+SSE transport: 400, 404 or 405 without a
// modern error body.
func (c *Client) tryHTTPSSE(err error) bool {
	var herr *HTTPError
	if errors.As(err, &herr) {
		switch herr.StatusCode {
		case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
			return true
		}
	}
	return false
}

// supportedVersions returns the versions an UnsupportedProtocolVersion
// error lists in its data (supported), and whether err is one. A data
// member that does not decode lists none.
func supportedVersions(err error) ([]string, bool) {
	var rpc *RPCError
	if !errors.As(err, &rpc) || rpc.Code != CodeUnsupportedVersion {
		return nil, false
	}
	var data struct {
		Supported []string `json:"supported"`
	}
	_ = json.Unmarshal(rpc.Data, &data)
	return data.Supported, true
}
