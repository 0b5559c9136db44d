package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Without a model, the stand-in still gives every kind of span.
func TestRunWithoutModel(t *testing.T) {
	var out bytes.Buffer
	noEnv := func(string) string { return "" }
	require.NoError(t, run(context.Background(), &out, noEnv))
	for _, want := range []string{`"Name": "discover text"`, `"Name": "discover notes"`, `"Name": "invoke_agent"`,
		`"Name": "chat"`, `"Name": "execute_tool text_count"`, `"Name": "tools/call count"`,
		`"Value": "execute_tool"`, `"Name": "initialize"`, "answer: The tool says:", "9 words", "tools/call           1 requests"} {
		assert.Contains(t, out.String(), want)
	}
}
