package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// sandbox is a view's own origin: a listener on a port of 127.0.0.1 of
// its own, which serves the view's proxy page once and the proxy's
// script, nothing else. A view shares its origin with no other view, so
// that no view reaches another's document, storage or proxy: a view is
// the HTML of a server, and servers do not trust each other. (One origin
// for every view let a hostile view read another's document through
// top.frames[i].frames[0] and make its proxy relay forged messages.)
//
// Its fields are guarded by the view's mu.
type sandbox struct {
	origin string // "http://127.0.0.1:port"
	token  string // the proxy page's single-use token; "" once served
	srv    *http.Server
	closed bool
}

// errViewClosed says that a view was torn down before its sandbox opened.
var errViewClosed = errors.New("the view is closed")

// serve opens v's origin and returns the URL of its proxy page.
func (s *viewSet) serve(h *Host, v *view) (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		l.Close()
		return "", errViewClosed
	}
	v.origin, v.token = "http://"+l.Addr().String(), randomID()
	v.srv = &http.Server{Handler: h.sandboxHandler(v), ReadHeaderTimeout: 10 * time.Second}
	srv, src := v.srv, v.origin+"/proxy/"+v.token
	s.serving.Add(1)
	v.mu.Unlock()
	go func() {
		defer s.serving.Done()
		_ = srv.Serve(l)
	}()
	return src, nil
}

// close tears v down: its bridge, then its origin.
func (v *view) close(ctx context.Context) {
	v.mu.Lock()
	v.closed = true
	srv := v.srv
	v.mu.Unlock()
	_ = v.bridge.Close(ctx)
	if srv != nil {
		_ = srv.Close()
	}
}

// sandboxHandler serves v's origin: its proxy page once, under its CSP,
// and the proxy's script. Nothing else: the view's 'self' is this origin.
func (h *Host) sandboxHandler(v *view) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /proxy/{token}", func(w http.ResponseWriter, r *http.Request) {
		v.mu.Lock()
		ok := v.token != "" && r.PathValue("token") == v.token
		if ok {
			v.token = ""
		}
		v.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Security-Policy", v.csp)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_ = pages.ExecuteTemplate(w, "proxy.html", map[string]string{"HostOrigin": h.HostOrigin})
	})
	mux.HandleFunc("GET /proxy.js", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, static, "static/proxy.js")
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if "http://"+r.Host != v.origin {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
}
