package sse_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"git.rickub.com/bots-garden/mini-me/sse"
)

func ExampleDecoder_Events() {
	// In a client, the stream is an http.Response.Body.
	stream := strings.NewReader("" +
		": a comment, ignored\n\n" +
		"id: 1\nretry: 2000\ndata:\n\n" + // an MCP priming event: empty data
		"id: 2\ndata: {\"jsonrpc\":\"2.0\",\n" +
		"data:  \"method\":\"ping\"}\n\n" +
		"event: done\ndata: bye\n\n")

	dec := sse.NewDecoder(stream, &sse.Options{IdleTimeout: time.Minute})
	for ev, err := range dec.Events(context.Background()) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		if ev.Data == "" {
			continue // nothing to decode
		}
		fmt.Printf("type=%q id=%q data=%q\n", ev.Type, ev.ID, ev.Data)
	}
	retry, _ := dec.Retry()
	fmt.Printf("resume after %v from event %q\n", retry, dec.LastEventID())
	// Output:
	// type="" id="2" data="{\"jsonrpc\":\"2.0\",\n \"method\":\"ping\"}"
	// type="done" id="2" data="bye"
	// resume after 2s from event "2"
}
