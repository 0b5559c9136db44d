package session

import (
	"encoding/json"
	"fmt"
)

// Encode returns the JSON encoding of each message, as Batch.Messages
// holds them: Encode(result.Messages) for the []agent.Message of a run.
func Encode[M any](msgs []M) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(msgs))
	for i := range msgs {
		b, err := json.Marshal(msgs[i])
		if err != nil {
			return nil, fmt.Errorf("session: encoding message %d: %w", i, err)
		}
		out[i] = b
	}
	return out, nil
}

// Decode decodes each message into an M: Decode[agent.Message] of
// Session.Messages gives the conversation to run on.
func Decode[M any](raw []json.RawMessage) ([]M, error) {
	out := make([]M, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			return nil, fmt.Errorf("session: decoding message %d: %w", i, err)
		}
	}
	return out, nil
}
