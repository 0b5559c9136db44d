package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
)

// ServeStdio serves s over stdio: one JSON-RPC message per line read from
// in, one answer per line written to out, requests answered in order. It
// returns nil when in ends, as an MCP server does when its client closes
// its stdin, or an error when in cannot be read, a line exceeds
// MaxMessageSize, or out cannot be written. ctx is given to the tools.
//
// Nothing but protocol messages goes to out: a stdio server's stdout
// belongs to the protocol.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), MaxMessageSize)
	w := bufio.NewWriter(out)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var msg jsonrpc.Message
		var resp jsonrpc.Response
		switch err := json.Unmarshal(line, &msg); {
		case err != nil:
			resp = response(nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error"})
		case msg.Method == "" || len(msg.ID) == 0:
			continue // a notification or a response: nothing to answer
		default:
			modern, rerr := s.requestEra(msg.Params)
			var res any
			if rerr == nil {
				res, rerr = s.answer(ctx, msg.Method, msg.Params, modern)
			}
			resp = response(msg.ID, res, rerr)
		}
		b, err := json.Marshal(resp)
		if err != nil {
			return fmt.Errorf("demo: encoding an answer: %w", err)
		}
		w.Write(b)
		w.WriteByte('\n')
		if err := w.Flush(); err != nil {
			return fmt.Errorf("demo: writing an answer: %w", err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("demo: reading requests: %w", err)
	}
	return nil
}
