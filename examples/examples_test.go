package examples_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/examples/demo"
)

// bin is the directory holding the examples, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "minime-examples-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	// Built as the tests are (with -race when they are), so the build
	// reuses the packages the test build compiled.
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "./quickstart", "./chat", "./stdio", "./approver", "./serve", "./host")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the examples:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { os.RemoveAll(dir) }))
}

// modelVars are the variables that name a model; every run starts without
// them, as on a fresh machine.
var modelVars = []string{"MINIME_MODEL_URL", "MINIME_MODEL", "MINIME_API_KEY", "OPENAI_BASE_URL",
	"OPENAI_API_KEY", "OPENAI_MODEL", "OLLAMA_HOST", "MODEL_RUNNER_HOST"}

// environ returns the test's environment without the model variables,
// with Docker Model Runner's probe pointed at a closed port (a machine
// running it would otherwise answer), and with set added.
func environ(t *testing.T, set ...string) []string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close())
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !contains(modelVars, name) {
			env = append(env, kv)
		}
	}
	// A race-enabled program sleeps a second before exiting, by default.
	env = append(env, "MODEL_RUNNER_HOST=http://"+closed, "GORACE=atexit_sleep_ms=0")
	return append(env, set...)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// run runs an example as a person would, with stdin as its input, and
// returns what it printed and its exit code. It fails the test if the
// example does not end within 30 s.
func run(t *testing.T, env []string, stdin, name string, args ...string) (string, int) {
	t.Helper()
	return runIn(t, "", env, stdin, name, args...)
}

// runIn is run in the directory dir ("": the test's).
func runIn(t *testing.T, dir string, env []string, stdin, name string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "%s did not end in time; it printed:\n%s", name, out.String())
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return out.String(), code
}

// model serves an OpenAI-compatible endpoint on 127.0.0.1 that plays
// turns and lists one model, "demo-model", as local servers do.
func model(t *testing.T, turns ...openaitest.Turn) (*openaitest.Server, string) {
	llm := &openaitest.Server{Turns: turns}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"demo-model","object":"model"}]}`)
	})
	mux.Handle("/", llm)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return llm, srv.URL + "/v1"
}

func call(id, name, args string) openaitest.Turn {
	return openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: id, Name: name, Arguments: args}}}
}

// words returns text with each run of white space made one space, for
// assertions on wrapped paragraphs.
func words(text string) string { return strings.Join(strings.Fields(text), " ") }

// toolResults checks that the model was asked n times, and returns the
// tool messages of the last request: what the tools returned, as the
// model saw it.
func toolResults(t *testing.T, llm *openaitest.Server, n int) []string {
	t.Helper()
	reqs := llm.Requests()
	require.Len(t, reqs, n)
	var out []string
	for _, m := range reqs[n-1].Messages {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return out
}

// input is one run of an example without a model: its input, and what it
// prints then besides what every run prints.
type input struct {
	name, stdin string
	want        []string
}

// withoutModel runs the example name once per input, without a model, and
// checks that each run ends with status 0 having printed want and the
// input's own; check, if not nil, checks more of what it printed.
func withoutModel(t *testing.T, name string, want []string, inputs []input, check func(t *testing.T, out string)) {
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			out, code := run(t, environ(t), in.stdin, name)
			assert.Equal(t, 0, code, out)
			for _, w := range append(slices.Clip(want), in.want...) {
				assert.Contains(t, out, w)
			}
			if check != nil {
				check(t, out)
			}
		})
	}
}

func TestQuickstartWithoutModel(t *testing.T) {
	withoutModel(t, "quickstart", []string{
		"mini-me quickstart: 2 MCP servers started on 127.0.0.1",
		"text   modern (2026-07-28)  demo-text 1.0.0, 3 tools",
		"notes  legacy (2025-11-25)  demo-notes 1.0.0, 4 tools",
		"text_count         text   read-only",
		"notes_delete_note  notes  destructive",
		"warnings: none",
		`→ text_count {"text":"The quick brown fox jumps over the lazy dog"}`,
		"Tool call awaiting your approval",
	}, []input{
		{"approved", "y\n", []string{"← ok:\n  9 words, 43 characters, 1 line"}},
		{"input closed", "", []string{"(no answer: input closed; call denied)", "← not run (deny: no answer: the input was closed)"}},
		{"refused", "n not now\n", []string{"← not run (deny: not now)"}},
	}, func(t *testing.T, out string) {
		help := words(out)
		for _, want := range []string{"No model is configured, and Docker Model Runner cannot be used (http://127.0.0.1:",
			"/engines/v1 does not answer: connect: connection refused)",
			"docker model pull", "OLLAMA_HOST", "MINIME_MODEL_URL", "OPENAI_API_KEY"} {
			assert.Contains(t, help, want)
		}
		assert.NotContains(t, out, "goroutine ", "no stack trace")
	})
}

// A model that is named but never answers is given up after the probe's
// two seconds: the program explains and ends.
func TestQuickstartModelDoesNotAnswer(t *testing.T) {
	stuck := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer stuck.Close()
	defer stuck.CloseClientConnections()
	start := time.Now()
	out, code := run(t, environ(t, "MINIME_MODEL_URL="+stuck.URL+"/v1", "MINIME_MODEL=m"), "", "quickstart")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, words(out), "The model named by MINIME_MODEL_URL cannot be used ("+stuck.URL+"/v1 does not answer within 2s)")
	assert.Contains(t, out, "← not run")
	assert.Less(t, time.Since(start), 10*time.Second)
}

func TestQuickstartWithModel(t *testing.T) {
	llm, url := model(t,
		call("call_1", "text_count", `{"text":"The quick brown fox jumps over the lazy dog"}`),
		openaitest.Turn{Text: "That sentence has 9 words."})
	out, code := run(t, environ(t, "MINIME_MODEL_URL="+url), "y\n", "quickstart")
	t.Log(out)
	assert.Equal(t, 0, code, out)
	for _, want := range []string{
		"model: demo-model at " + url + " (on this machine)",
		`you: How many words are there in "The quick brown fox jumps over the lazy dog"?`,
		`→ text_count {"text":"The quick brown fox jumps over the lazy dog"}`,
		"Tool call awaiting your approval",
		"← ok text_count: 9 words, 43 characters, 1 line",
		"That sentence has 9 words.",
		"(2 model turns,",
	} {
		assert.Contains(t, out, want)
	}
	results := toolResults(t, llm, 2)
	require.Len(t, results, 1)
	assert.Contains(t, results[0], "9 words, 43 characters, 1 line")
	first := llm.Requests()[0]
	assert.Equal(t, "demo-model", first.Model)
	var offered []string
	for _, tool := range first.Tools {
		offered = append(offered, tool.Name)
	}
	assert.Equal(t, []string{"text_count", "text_transform", "text_sort_lines", "notes_list_notes",
		"notes_read_note", "notes_save_note", "notes_delete_note"}, offered)
}

func TestStdio(t *testing.T) {
	t.Run("without a model", func(t *testing.T) {
		withoutModel(t, "stdio", []string{
			"finance  modern (2026-07-28)  demo-finance 1.0.0, 5 tools",
			"finance_recategorize       finance  destructive",
			"No model is configured",
			"selected profile perso (Personal, 7 transactions)",
			"groceries       66.55",
			"Tool call awaiting your approval\n  server:      finance\n  tool:        recategorize (finance_recategorize)",
		}, []input{
			{"approved", "y\n", []string{"t6 (Fromagerie Durand): category other -> groceries", "groceries       84.95"}},
			{"input closed", "", []string{"← not run (deny: no answer: the input was closed)"}},
		}, func(t *testing.T, out string) {
			// Auto mode: only the destructive call is asked.
			assert.Equal(t, 1, strings.Count(out, "Tool call awaiting your approval"))
		})
	})
	t.Run("with a model", func(t *testing.T) {
		llm, url := model(t,
			call("c1", "finance_select_profile", `{"profile":"perso"}`),
			call("c2", "finance_recategorize", `{"id":"t6","category":"groceries"}`),
			call("c3", "finance_list_transactions", `{"category":"groceries"}`),
			openaitest.Turn{Text: "You spent 84.95 on groceries."})
		out, code := run(t, environ(t, "MINIME_MODEL_URL="+url, "MINIME_MODEL=local-model"), "y\n", "stdio")
		assert.Equal(t, 0, code, out)
		assert.Contains(t, out, "model: local-model at "+url)
		assert.Contains(t, out, "← ok finance_recategorize: t6 (Fromagerie Durand): category other -> groceries")
		assert.Contains(t, out, "You spent 84.95 on groceries.")
		assert.Equal(t, 1, strings.Count(out, "Tool call awaiting your approval"))
		results := toolResults(t, llm, 4)
		require.Len(t, results, 3)
		assert.Contains(t, results[2], "t6  2026-06-18  Fromagerie Durand")
	})
}

func TestApprover(t *testing.T) {
	t.Run("without a model", func(t *testing.T) {
		out, code := run(t, environ(t), "y\nn\n", "approver")
		assert.Equal(t, 0, code, out)
		for _, want := range []string{
			"[audit] text_count: allow once (asked)\n← ok:\n  6 words",
			`[ui] Run notes_save_note with {"text":"6 words","title":"hamlet"}? It writes, additive only`,
			"[audit] notes_save_note: allow once (asked)",
			`saved note "hamlet"`,
			`[ui] Run notes_delete_note with {"title":"shopping"}? It writes, destructive`,
			"[audit] notes_delete_note: deny (asked)",
			"← not run (deny: the user said no)",
		} {
			assert.Contains(t, out, want)
		}
		assert.Equal(t, 2, strings.Count(out, "[ui] "), "the read-only call is not asked")
	})
	t.Run("with a model, nobody answering", func(t *testing.T) {
		llm, url := model(t,
			call("c1", "notes_save_note", `{"title":"hamlet","text":"6 words"}`),
			openaitest.Turn{Text: "I could not save the note."})
		out, code := run(t, environ(t, "MINIME_MODEL_URL="+url), "", "approver")
		assert.Equal(t, 0, code, out)
		assert.Contains(t, out, "← denied notes_save_note")
		assert.Contains(t, out, "I could not save the note.")
		results := toolResults(t, llm, 2)
		require.Len(t, results, 1)
		assert.Contains(t, results[0], "no one is there to approve it")
	})
}

// With -wait the run stops at the call that needs the user, its state
// goes to a file, and a fresh Agent resumes from it with the decision.
func TestApproverWaiting(t *testing.T) {
	stateFile := regexp.MustCompile(`saved in (\S+state\.json)\n`)
	t.Run("without a model, approved", func(t *testing.T) {
		out, code := run(t, environ(t), "y\n", "approver", "-wait")
		assert.Equal(t, 0, code, out)
		for _, want := range []string{
			"Without a model, a script plays its part",
			"← ok text_count: 6 words",
			`← pending notes_save_note: The call to "notes_save_note" was not run: it is waiting for the user's approval.`,
			"[host] the run stopped for approval; its state (",
			`[ui] Run notes_save_note with {"title":"hamlet","text":"6 words"}? It writes, additive only`,
			"[host] resuming the run from ",
			`← ok notes_save_note: saved note "hamlet"`,
			"(scripted) Both calls are settled",
		} {
			assert.Contains(t, out, want)
		}
		assert.Equal(t, 1, strings.Count(out, "→ text_count"), "the read-only call ran before the pause, and not again")
		m := stateFile.FindStringSubmatch(out)
		require.NotNil(t, m, out)
		assert.NoFileExists(t, m[1], "the example removes its state file")
	})
	t.Run("with a model, denied", func(t *testing.T) {
		llm, url := model(t,
			call("c1", "notes_delete_note", `{"title":"shopping"}`),
			openaitest.Turn{Text: "The note was kept."})
		out, code := run(t, environ(t, "MINIME_MODEL_URL="+url), "n\n", "approver", "-wait")
		assert.Equal(t, 0, code, out)
		assert.Contains(t, out, `[ui] Run notes_delete_note with {"title":"shopping"}? It writes, destructive`)
		assert.Contains(t, out, "← denied notes_delete_note")
		assert.Contains(t, out, "The note was kept.")
		results := toolResults(t, llm, 2)
		require.Len(t, results, 1)
		assert.Contains(t, results[0], "Permission denied")
		assert.Contains(t, results[0], "the user said no")
	})
}

// Without -config the chat reads ./mini-me.yaml, else the one in the
// user's configuration directory, else runs without tools.
func TestChatWithoutModel(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	env := environ(t, "XDG_CONFIG_HOME="+home)
	out, code := runIn(t, dir, env, "", "chat")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "mini-me chat (no mini-me.yaml found: no tools; see -help)\n\nservers: none\ntools: none\n")
	assert.Contains(t, out, "No model is configured")

	demoConfig(t, filepath.Join(home, "mini-me"))
	out, code = runIn(t, dir, env, "", "chat")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "mini-me chat ("+filepath.Join(home, "mini-me", "mini-me.yaml")+")")
	assert.Contains(t, out, "notes_save_note    notes  writes")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "mini-me.yaml"), []byte("mcp:\n  servers: []\n"), 0o600))
	out, code = runIn(t, dir, env, "", "chat")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "mini-me chat (mini-me.yaml)")
	assert.NotContains(t, out, "notes_save_note", "./mini-me.yaml comes first")
}

// demoConfig serves the demo's text and notes servers on 127.0.0.1 for the
// test, and writes dir/mini-me.yaml listing them.
func demoConfig(t *testing.T, dir string) {
	t.Helper()
	yaml := "mcp:\n  permissions: ask\n  servers:\n"
	for _, s := range []*demo.Server{demo.Text(), demo.Notes()} {
		url, stop, err := demo.Serve(s)
		require.NoError(t, err)
		t.Cleanup(stop)
		yaml += fmt.Sprintf("    - name: %s\n      url: %s\n", strings.TrimPrefix(s.Name, "demo-"), url)
	}
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mini-me.yaml"), []byte(yaml), 0o600))
}

func TestChatBadConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mini-me.yaml")
	require.NoError(t, os.WriteFile(path, []byte("mcp:\n  servers:\n    - name: x\n      url: ftp://nowhere\n"), 0o600))
	out, code := run(t, environ(t), "", "chat", "-config", path)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "mini-me.yaml:4:")
	assert.NotContains(t, out, "goroutine ")
}

// The README's host takes its model from the environment as every example
// does (issue 40 #3: it hard-coded Docker Model Runner): with none, it
// says how to get one; with MINIME_MODEL_URL, that model answers.
func TestHost(t *testing.T) {
	dir := t.TempDir()
	demoConfig(t, dir)
	out, code := runIn(t, dir, environ(t), "", "host")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "MINIME_MODEL_URL", "the help names the variables")
	assert.NotContains(t, out, "goroutine ")

	llm, url := model(t, openaitest.Turn{Text: "Nothing is on your calendar today."})
	out, code = runIn(t, dir, environ(t, "MINIME_MODEL_URL="+url), "", "host")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "Nothing is on your calendar today.")
	reqs := llm.Requests()
	require.NotEmpty(t, reqs)
	assert.Equal(t, "What is on my calendar today?", reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1].Content)
}
