package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/llmtest"
)

// TestWriteLegacy writes, with MINIME_WRITE_LEGACY=1, the files of
// testdata/legacy: a conversation and a paused State as this release
// stores them, for the next release's decoding tests.
func TestWriteLegacy(t *testing.T) {
	if os.Getenv("MINIME_WRITE_LEGACY") == "" {
		t.Skip("set MINIME_WRITE_LEGACY=1 to write testdata/legacy")
	}
	dir := filepath.Join("testdata", "legacy")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	write := func(name string, v any) {
		data, err := json.MarshalIndent(v, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), append(data, '\n'), 0o644))
	}

	_, private := startMCP(t, "notes", mcpTool(readDef, echoTool(readDef)))
	private.Egress = config.EgressLocal
	_, public := startMCP(t, "github", mcpTool(issueDef, echoTool(issueDef)))
	_, local := startLLM(t,
		llmtest.Turn{Text: "Let me look.", ToolCalls: []llmtest.ToolCall{
			{ID: "c1", Name: "github_get_issue", Arguments: `{"number":7}`},
			{ID: "c2", Name: "notes_read", Arguments: `{"path":"diary"}`},
		}},
		llmtest.Turn{Text: "Issue 7 is open; your diary says to call Bob."})
	a := &agent.Agent{Model: local, Tools: discover(t, private, public), Policy: allowAll()}
	msgs := append([]agent.Message{{Role: agent.RoleSystem, Content: "You are a careful assistant."}}, user("what is issue 7 and what does my diary say?")...)
	res, err := a.Run(context.Background(), msgs)
	require.NoError(t, err)
	write("conversation.json", res.Messages)

	srv := func() config.Server { _, s := filesServer(t); return s }()
	_, st := pause(t, srv, threeCalls, llmtest.Turn{Text: "unused"})
	write("state.json", st)
}
