package mcp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// unixEndpoint splits a unix socket URL, unix:///path/to.sock with an
// optional HTTP path after a colon (unix:///run/app.sock:/mcp), into the
// socket's path and the HTTP URL requests go to: http://localhost with the
// path ("/" when none) and the query.
func unixEndpoint(u *url.URL) (sock string, endpoint *url.URL, err error) {
	if u.Host != "" || !strings.HasPrefix(u.Path, "/") {
		return "", nil, fmt.Errorf("mcp: server url: a unix socket URL is unix:///absolute/path.sock[:/http/path]")
	}
	sock, path, _ := strings.Cut(u.Path, ":/")
	return sock, &url.URL{Scheme: "http", Host: "localhost", Path: "/" + path, RawQuery: u.RawQuery}, nil
}

// overUnix returns a copy of base whose connections all go to the unix
// socket sock, and the transport it made, whose idle connections Close
// releases. base's Transport must be nil or an *http.Transport: any other
// RoundTripper decides where it connects.
func overUnix(base *http.Client, sock string) (*http.Client, *http.Transport, error) {
	var tr *http.Transport
	switch rt := base.Transport.(type) {
	case nil:
		tr = http.DefaultTransport.(*http.Transport).Clone()
	case *http.Transport:
		tr = rt.Clone()
	default:
		return nil, nil, fmt.Errorf("mcp: server url: a unix socket needs an HTTPClient whose Transport is nil or an *http.Transport, not %T", rt)
	}
	tr.Proxy = nil
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
		return d.DialContext(ctx, "unix", sock)
	}
	hc := *base
	hc.Transport = tr
	return &hc, tr, nil
}
