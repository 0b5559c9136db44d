package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Without a model, the stand-in still gives every kind of span. Stdout
// holds the spans alone, as JSON (jq reads it); the rest goes to stderr.
func TestRunWithoutModel(t *testing.T) {
	var stdout, stderr bytes.Buffer
	noEnv := func(string) string { return "" }
	require.NoError(t, run(context.Background(), &stdout, &stderr, noEnv))
	var names []string
	dec := json.NewDecoder(bytes.NewReader(stdout.Bytes()))
	for {
		var span struct{ Name string }
		err := dec.Decode(&span)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "stdout is not JSON spans alone:\n%s", stdout.String())
		require.NotEmpty(t, span.Name, "a JSON value that is not a span")
		names = append(names, span.Name)
	}
	for _, want := range []string{"discover text", "discover notes", "invoke_agent", "chat stand-in",
		"execute_tool text_count", "tools/call count", "initialize"} {
		assert.Contains(t, names, want)
	}
	assert.NotContains(t, names, "chat", "the stand-in's chat spans are named after it, as real ones are")
	assert.Contains(t, stdout.String(), `"Value": "execute_tool"`)
	for _, want := range []string{"No model", "a stand-in plays its part", "answer: The tool says:", "9 words", "tools/call           1 requests"} {
		assert.Contains(t, stderr.String(), want)
	}
}
