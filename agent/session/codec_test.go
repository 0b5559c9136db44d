package session_test

import (
	"encoding/json"
	"strings"
	"testing"

	"git.rickub.com/bots-garden/mini-me/agent/session"
)

func TestEncodeDecodeErrors(t *testing.T) {
	if _, err := session.Encode([]any{"ok", make(chan int)}); err == nil || !strings.Contains(err.Error(), "message 1") {
		t.Fatalf("Encode of a channel: %v, want an error naming message 1", err)
	}
	type msg struct {
		Role string `json:"role"`
	}
	raw := []json.RawMessage{json.RawMessage(`{"role":"user"}`), json.RawMessage(`{"role":42}`)}
	if _, err := session.Decode[msg](raw); err == nil || !strings.Contains(err.Error(), "message 1") {
		t.Fatalf("Decode of a number as a string: %v, want an error naming message 1", err)
	}
}
