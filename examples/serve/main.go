// Serve serves the demo's MCP servers over Streamable HTTP on this
// machine until Ctrl-C, and prints a mini-me.yaml that lists them, so
// that a host of your own (or examples/chat) has HTTP servers to talk to:
//
//	go run ./examples/serve                      # 127.0.0.1:8765
//	go run ./examples/serve -addr 127.0.0.1:9000
//	go run ./examples/serve > mini-me.yaml       # the configuration, ready to use
//
// The text tools (text_count, text_transform, text_sort_lines) answer at
// /text/mcp and speak the stateless 2026-07-28 revision; the notepad
// (notes_save_note, notes_list_notes, notes_read_note, notes_delete_note)
// answers at /notes/mcp and speaks only the initialize-based 2025-11-25
// one. The configuration goes to stdout, the rest to stderr. It listens on
// a loopback address only: the demo servers have no authentication.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"git.rickub.com/bots-garden/mini-me/examples/demo"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8765", "the loopback address to listen on (port 0: any free port)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr string, stdout, stderr io.Writer) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("-addr %s: not a loopback address (the demo servers have no authentication)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/text/mcp", demo.Text())
	mux.Handle("/notes/mcp", demo.Notes())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()

	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "mcp:\n  servers:\n    - name: text\n      url: %s/text/mcp\n    - name: notes\n      url: %s/notes/mcp\n", base, base)
	fmt.Fprintf(stderr, "serving the demo's MCP servers at %s/text/mcp and %s/notes/mcp until Ctrl-C\n", base, base)

	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(stderr, "stopped")
	return nil
}
