package temporal_test

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/temporal"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/temporaldev"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// The tests run a real Temporal server (internal/devserver, a process of
// its own), real worker processes (this test binary, started again with
// workerEnv set, killed with SIGKILL to simulate a crash), and the MCP
// test server in the test process, whose counters say what ran.

const workerEnv = "MINIME_TEMPORAL_WORKER"

// server is the Temporal server of the test binary.
var server *temporaldev.Server

// quiet is the SDK's logger in the tests: warnings and errors only.
func quiet() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
}

// dial connects a client to the test server.
func dial(t testing.TB) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: server.HostPort, Namespace: server.Namespace, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// workerProc is a worker process.
type workerProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}
}

// startWorker starts a worker process serving queue, with the MCP server
// at mcpURL ("" for none), and waits until it polls. env adds to its
// environment: MINIME_MODEL=URL makes its model that OpenAI-compatible
// endpoint, which it does not retry itself, in place of scriptModel;
// MINIME_BLOBS=DIR stores long outputs in DIR (dirBlobs);
// MINIME_LOCAL=1 makes its model local (localScript); MINIME_EGRESS=local
// makes the MCP server local-only; MINIME_SEAL=KEY (hex) seals its
// client's payloads with that key and sets SealedHistory.
func startWorker(t testing.TB, queue, mcpURL string, env ...string) *workerProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnv+"=1", "MINIME_HOSTPORT="+server.HostPort,
		"MINIME_NAMESPACE="+server.Namespace, "MINIME_QUEUE="+queue, "MINIME_MCP="+mcpURL)
	cmd.Env = append(cmd.Env, env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &workerProc{cmd: cmd, stdin: stdin, done: make(chan struct{})}
	ready := make(chan string, 1)
	go func() {
		defer close(w.done)
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
	}()
	if line := <-ready; strings.TrimSpace(line) != "ready" {
		t.Fatalf("the worker did not start: %q", line)
	}
	t.Cleanup(w.stop)
	return w
}

// kill kills the worker as a crash would: SIGKILL, nothing cleaned up.
func (w *workerProc) kill() {
	_ = w.cmd.Process.Kill()
	<-w.done
}

// stop stops the worker gracefully (its stdin ends).
func (w *workerProc) stop() {
	_ = w.stdin.Close()
	select {
	case <-w.done:
	case <-time.After(20 * time.Second):
		w.kill()
	}
}

// workerMain is the worker process: the agent's Activities with the
// scripted model, an echo Func and the MCP server's tools. Its deadlock
// detection allows a workflow task 20s, not 1s: under -race, on a machine
// shared by many builds, the first task of a run (which compiles the
// tools' schemas) can take longer than a second without being stuck.
func workerMain() int {
	ctx := context.Background()
	opts := client.Options{HostPort: os.Getenv("MINIME_HOSTPORT"), Namespace: os.Getenv("MINIME_NAMESPACE"), Logger: quiet()}
	acts := &temporal.Activities{Model: scriptModel{}, Funcs: []*agent.Func{echoFunc()}, MaxToolOutput: 4 << 10}
	if key := os.Getenv("MINIME_SEAL"); key != "" {
		opts = sealed(key, opts)
		acts.SealedHistory = true
	}
	c, err := client.Dial(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	if os.Getenv("MINIME_LOCAL") != "" {
		acts.Model = localScript{}
	}
	if dir := os.Getenv("MINIME_BLOBS"); dir != "" {
		acts.Blobs = dirBlobs(dir)
	}
	if url := os.Getenv("MINIME_MODEL"); url != "" {
		acts.Model = &openai.Model{BaseURL: url, Model: "test-model", MaxRetries: -1}
	}
	if url := os.Getenv("MINIME_MCP"); url != "" {
		ts, err := toolset.Discover(ctx, []config.Server{{Name: "files", URL: url, Egress: config.Egress(os.Getenv("MINIME_EGRESS"))}}, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer ts.Close()
		acts.Tools = ts
	}
	w := worker.New(c, os.Getenv("MINIME_QUEUE"), worker.Options{StickyScheduleToStartTimeout: time.Second, DeadlockDetectionTimeout: 20 * time.Second})
	acts.Register(w)
	if err := w.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	w.Stop()
	return 0
}

// echoFunc is a local Func: it echoes its text.
func echoFunc() *agent.Func {
	f, err := agent.NewFunc("echo", "Echoes its text.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return "echo " + in.Text, nil
	})
	if err != nil {
		panic(err)
	}
	return f
}

// script is what scriptModel does in a run, in the run's first user
// message: the calls of each turn, then an answer made of the tool
// messages it read.
type script struct {
	Turns [][]scriptCall `json:"turns"`
}

type scriptCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// userScript is the conversation whose first message is s.
func userScript(s script) []agent.Message {
	b, _ := json.Marshal(s)
	return []agent.Message{agent.UserMessage(string(b))}
}

// scriptModel follows the script of the conversation, statelessly: its
// turn is the number of assistant messages so far, so a retried or
// replayed call answers the same. It reasons as Claude and Gemini do:
// each reply carries a signed reasoning part that it requires back,
// unchanged, in every later request, so a run whose history loses it
// fails.
type scriptModel struct{}

// scriptReasoning is the reasoning part of scriptModel's turn.
func scriptReasoning(turn int) agent.Part {
	p := agent.ReasoningPart("script", fmt.Sprintf("thinking about turn %d", turn), fmt.Sprintf("signed-%d", turn))
	p.Metadata = map[string]json.RawMessage{"script": json.RawMessage(fmt.Sprintf(`{"turn":%d}`, turn))}
	return p
}

func (scriptModel) Chat(_ context.Context, req *agent.ChatRequest, _ func(agent.Delta)) (*agent.Reply, error) {
	var s script
	turn := 0
	var outputs []string
	for _, m := range req.Messages {
		switch m.Role {
		case agent.RoleUser:
			if s.Turns == nil {
				if err := json.Unmarshal([]byte(m.Text()), &s); err != nil {
					return nil, fmt.Errorf("scriptModel: the first user message is no script: %w", err)
				}
			}
		case agent.RoleAssistant:
			if len(m.Parts) == 0 || !reflect.DeepEqual(m.Parts[0], scriptReasoning(turn)) {
				return nil, fmt.Errorf("scriptModel: assistant turn %d came back without its signed reasoning", turn)
			}
			turn++
		case agent.RoleTool:
			outputs = append(outputs, m.Text())
		}
	}
	if turn < len(s.Turns) {
		msg := agent.Message{Role: agent.RoleAssistant, Parts: []agent.Part{scriptReasoning(turn)}}
		for i, c := range s.Turns[turn] {
			msg.Parts = append(msg.Parts, agent.CallPart(agent.ToolCall{ID: fmt.Sprintf("call_%d_%d", turn, i), Name: c.Name, Arguments: string(c.Args)}))
		}
		return &agent.Reply{Message: msg, Finish: agent.FinishToolCalls}, nil
	}
	return &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant,
		Parts: []agent.Part{scriptReasoning(turn), agent.TextPart("answer: " + strings.Join(outputs, " | "))}}, Finish: agent.FinishStop}, nil
}

// localScript is scriptModel on this machine (agent.Capabilities.Local).
type localScript struct{ scriptModel }

func (localScript) Capabilities() agent.Capabilities { return agent.Capabilities{Local: true} }

// sealed returns opts sealed with the codec of key, in hex.
func sealed(key string, opts client.Options) client.Options {
	k, err := hex.DecodeString(key)
	if err != nil {
		panic(err)
	}
	codec, err := temporal.NewCodec(k)
	if err != nil {
		panic(err)
	}
	return codec.ClientOptions(opts)
}

// counter counts the calls of the MCP test server's tools, and lets a
// test hold a call in flight.
type counter struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *counter) add(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[key]++
	return c.calls[key]
}

func (c *counter) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[key]
}

// dirBlobs is a BlobStore writing each output to a file of its folder;
// the reference is the file's path.
type dirBlobs string

func (d dirBlobs) Put(_ context.Context, workflowID, tool string, data []byte) (string, error) {
	f, err := os.CreateTemp(string(d), tool+"-*")
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return "", err
	}
	return f.Name(), nil
}
