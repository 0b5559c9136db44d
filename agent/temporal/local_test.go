package temporal_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/protobuf/proto"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/temporal"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// The output of the local-only MCP server's read of "s3cret": what must
// reach neither a hosted model nor the history in clear.
const secret = "read s3cret #1"

// startClaimingLocal starts a run of s whose input claims, as a starter
// could before the worker decided, "local_model": true.
func startClaimingLocal(t *testing.T, c client.Client, queue string, s script) client.WorkflowRun {
	t.Helper()
	raw, err := json.Marshal(temporal.Input{Messages: userScript(s), Config: temporal.Config{Mode: permission.ModeAuto}})
	require.NoError(t, err)
	var in map[string]any
	require.NoError(t, json.Unmarshal(raw, &in))
	in["config"].(map[string]any)["local_model"] = true
	run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{TaskQueue: queue}, temporal.WorkflowName, in)
	require.NoError(t, err)
	return run
}

// newKey returns a random codec key, in hex.
func newKey(t *testing.T) string {
	t.Helper()
	k := make([]byte, temporal.CodecKeySize)
	_, _ = rand.Read(k)
	return hex.EncodeToString(k)
}

// dialSealed connects a client that seals with key to the test server.
func dialSealed(t *testing.T, key string) client.Client {
	t.Helper()
	c, err := client.Dial(sealed(key, client.Options{HostPort: server.HostPort, Namespace: server.Namespace, Logger: quiet()}))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// rawHistory returns the run's history as the Temporal server stores it.
func rawHistory(t *testing.T, c client.Client, run client.WorkflowRun) []byte {
	t.Helper()
	var all []byte
	it := c.GetWorkflowHistory(context.Background(), run.GetID(), run.GetRunID(), false, 0)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		b, err := proto.Marshal(ev)
		require.NoError(t, err)
		all = append(all, b...)
	}
	return all
}

// TestHostedWorkerModel (issue 35 #9): a starter claims the model is
// local; the worker's model is hosted. The worker's fact wins: the
// local-only server's output never reaches the model.
func TestHostedWorkerModel(t *testing.T) {
	_, url, cnt, _, _ := filesServer(t)
	q := queue(t)
	key := newKey(t)
	startWorker(t, q, url, "MINIME_EGRESS=local", "MINIME_SEAL="+key)
	c := dialSealed(t, key)
	run := startClaimingLocal(t, c, q, script{Turns: [][]scriptCall{{call("files_read", `{"path":"s3cret"}`)}}})
	out := result(t, run)
	require.Equal(t, agent.StopAnswer, out.Result.Stop, out.Error)
	assert.NotContains(t, out.Result.Answer, secret, "the hosted model read the local-only output")
	assert.Zero(t, cnt.get("read s3cret"), "the local-only tool was offered to a hosted model")
}

// recorder is a hosted Model that keeps the requests it is given.
type recorder struct{ reqs []*agent.ChatRequest }

func (r *recorder) Chat(_ context.Context, req *agent.ChatRequest, _ func(agent.Delta)) (*agent.Reply, error) {
	r.reqs = append(r.reqs, req)
	return &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant, Parts: agent.Parts("ok")}, Finish: agent.FinishStop}, nil
}

// localTools is a ToolSource of one local-only server, "vault".
type localTools struct{}

func (localTools) Tools() []toolset.Tool {
	return []toolset.Tool{{Name: "vault_read", Server: "vault", Egress: config.EgressLocal, Tool: mcp.Tool{Name: "read"}}}
}

func (localTools) Call(context.Context, string, any) (*toolset.ToolResult, error) {
	return nil, nil
}

// TestChatWithholdsFromHostedModel (issue 35 #9): the Chat activity of a
// worker whose model is hosted withholds local-only content, whatever the
// workflow sent: a labelled message, a tool message of a local-only
// server of the worker, the arguments of the calls they answer, and the
// local-only server's tools.
func TestChatWithholdsFromHostedModel(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	model := &recorder{}
	acts := &temporal.Activities{Model: model, Tools: localTools{}, SealedHistory: true}
	env.RegisterActivity(acts.Chat)
	req := &agent.ChatRequest{
		Messages: []agent.Message{
			agent.SystemMessage("system"),
			agent.UserMessage("hello"),
			{Role: agent.RoleAssistant, Parts: callWithMetadata(agent.ToolCall{ID: "c1", Name: "vault_read", Arguments: `{"path":"s3cret"}`})},
			{Role: agent.RoleTool, ToolCallID: "c1", Name: "vault_read", Server: "vault", Parts: []agent.Part{agent.ToolResultPart(secret)}},
			{Role: agent.RoleAssistant, Parts: agent.Parts("it says " + secret), Egress: config.EgressLocal},
			{Role: agent.RoleUser, Parts: agent.Parts("attached: " + secret), Server: "other", Egress: config.EgressLocal},
		},
		Tools: []agent.ToolDef{{Name: "vault_read"}, {Name: "echo"}},
	}
	_, err := env.ExecuteActivity(acts.Chat, req)
	require.NoError(t, err)
	require.Len(t, model.reqs, 1)
	sent, err := json.Marshal(model.reqs[0])
	require.NoError(t, err)
	assert.NotContains(t, string(sent), "s3cret", "local-only content reached the hosted model")
	var offered []string
	for _, d := range model.reqs[0].Tools {
		offered = append(offered, d.Name)
	}
	assert.Equal(t, []string{"echo"}, offered, "a local-only tool was offered to the hosted model")
	assert.Equal(t, "hello", model.reqs[0].Messages[1].Text(), "what is not local-only goes as it was")
	assert.Equal(t, `{"path":"s3cret"}`, req.Messages[2].ToolCalls()[0].Arguments, "the workflow's request is not changed")
}

// TestLocalOnlyHistory (issue 35 #14): the history of a run whose local
// model read a local-only server's output holds none of it in clear:
// with a sealed history, the output is sealed; without one, the worker
// does not offer the local-only tools at all.
func TestLocalOnlyHistory(t *testing.T) {
	for _, tt := range []struct {
		name   string
		sealed bool
	}{{"sealed", true}, {"unsealed", false}} {
		t.Run(tt.name, func(t *testing.T) {
			_, url, cnt, _, _ := filesServer(t)
			q := queue(t)
			env := []string{"MINIME_EGRESS=local", "MINIME_LOCAL=1"}
			c := dial(t)
			if tt.sealed {
				key := newKey(t)
				env = append(env, "MINIME_SEAL="+key)
				c = dialSealed(t, key)
			}
			startWorker(t, q, url, env...)
			run := startClaimingLocal(t, c, q, script{Turns: [][]scriptCall{{call("files_read", `{"path":"s3cret"}`)}}})
			out := result(t, run)
			require.Equal(t, agent.StopAnswer, out.Result.Stop, out.Error)
			if tt.sealed {
				assert.Contains(t, out.Result.Answer, secret, "the local model read the local-only output")
			} else {
				assert.Zero(t, cnt.get("read s3cret"), "a local-only tool ran though the history is not sealed")
			}
			h := rawHistory(t, dial(t), run)
			assert.NotContains(t, string(h), secret, "the history holds the local-only output in clear")
			assert.Equal(t, tt.sealed, !strings.Contains(string(h), "files_read"), "sealed, the history holds not even the calls in clear")
		})
	}
}

// callWithMetadata returns the part of c with provider metadata that
// quotes its arguments, as a provider may keep them.
func callWithMetadata(c agent.ToolCall) []agent.Part {
	p := agent.CallPart(c)
	p.Metadata = map[string]json.RawMessage{"any-provider": json.RawMessage(`{"item":"s3cret-item"}`)}
	return []agent.Part{p}
}
