// Package modelenv finds the chat model a host uses, named by
// environment variables, and checks that it answers: the selection the
// examples make, for a host that wants the same.
//
// The variables, first match wins:
//
//  1. MINIME_MODEL_URL: the base URL of any OpenAI-compatible endpoint,
//     up to and including its version ("http://localhost:8080/v1"), with
//     MINIME_API_KEY holding its key when it needs one.
//  2. OPENAI_BASE_URL and/or OPENAI_API_KEY: the OpenAI convention; the
//     base URL defaults to https://api.openai.com/v1 and OPENAI_MODEL
//     names the model (default gpt-4o-mini on api.openai.com).
//  3. OLLAMA_HOST: Ollama's address ("127.0.0.1:11434",
//     "http://gpu-box:11434"), whose OpenAI-compatible API is under /v1.
//  4. MODEL_RUNNER_HOST: Docker Model Runner's address
//     ("http://localhost:12434"), under /engines/v1; when it is unset,
//     Docker Model Runner's default, http://localhost:12434/engines/v1.
//     Either is used only if it answers, since nothing asked for it.
//
// MINIME_MODEL names the model on any of them; without it (and without
// OPENAI_MODEL), the first model the endpoint lists is used.
//
// [Find] returns the model, an *openai.Model, once it answered; [Help]
// turns its error into a paragraph telling the user how to start one.
// Nothing here is needed to use the agent: a host that knows its model
// fills in an openai.Model itself.
package modelenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"git.rickub.com/bots-garden/mini-me/agent/openai"
)

// The environment variables read.
const (
	URLVar          = "MINIME_MODEL_URL"
	ModelVar        = "MINIME_MODEL"
	KeyVar          = "MINIME_API_KEY"
	OpenAIURLVar    = "OPENAI_BASE_URL"
	OpenAIKeyVar    = "OPENAI_API_KEY"
	OpenAIModelVar  = "OPENAI_MODEL"
	OllamaVar       = "OLLAMA_HOST"
	ModelRunnerVar  = "MODEL_RUNNER_HOST"
	modelRunnerBase = "http://localhost:12434"
	openAIBase      = "https://api.openai.com/v1"
	openAIModel     = "gpt-4o-mini"
)

// ProbeTimeout bounds the check that an endpoint answers.
const ProbeTimeout = 2 * time.Second

// Endpoint is a model endpoint named by the environment; plain data.
type Endpoint struct {
	// BaseURL is the API's base, such as "http://localhost:11434/v1".
	BaseURL string
	// Model names the model; empty means the first one the endpoint lists.
	Model string
	// KeyEnv names the variable that holds the API key; empty means none.
	KeyEnv string
	// From names the variable that chose the endpoint, for messages.
	From string
	// Optional is true for an endpoint nobody asked for (Docker Model
	// Runner): it is used only if it answers.
	Optional bool
}

// Lookup returns the endpoint the environment names; getenv is os.Getenv
// or a stand-in. It reads no secret: keys are only named (KeyEnv).
func Lookup(getenv func(string) string) (Endpoint, error) {
	model := getenv(ModelVar)
	switch {
	case getenv(URLVar) != "":
		ep := Endpoint{BaseURL: getenv(URLVar), Model: model, From: URLVar}
		if getenv(KeyVar) != "" {
			ep.KeyEnv = KeyVar
		}
		return checked(ep)
	case getenv(OpenAIURLVar) != "" || getenv(OpenAIKeyVar) != "":
		ep := Endpoint{BaseURL: getenv(OpenAIURLVar), Model: model, From: OpenAIURLVar}
		if ep.BaseURL == "" {
			ep.BaseURL, ep.From = openAIBase, OpenAIKeyVar
		}
		if ep.Model == "" {
			ep.Model = getenv(OpenAIModelVar)
		}
		if ep.Model == "" && strings.HasPrefix(ep.BaseURL, openAIBase) {
			ep.Model = openAIModel
		}
		if getenv(OpenAIKeyVar) != "" {
			ep.KeyEnv = OpenAIKeyVar
		}
		return checked(ep)
	case getenv(OllamaVar) != "":
		base, err := hostURL(getenv(OllamaVar), "11434")
		if err != nil {
			return Endpoint{}, fmt.Errorf("%s: %w", OllamaVar, err)
		}
		return checked(Endpoint{BaseURL: base + "/v1", Model: model, From: OllamaVar})
	case getenv(ModelRunnerVar) != "":
		base, err := hostURL(getenv(ModelRunnerVar), "12434")
		if err != nil {
			return Endpoint{}, fmt.Errorf("%s: %w", ModelRunnerVar, err)
		}
		return checked(Endpoint{BaseURL: base + "/engines/v1", Model: model, From: ModelRunnerVar, Optional: true})
	}
	return Endpoint{BaseURL: modelRunnerBase + "/engines/v1", Model: model, From: "Docker Model Runner's default address", Optional: true}, nil
}

// checked refuses a base URL that is not an http or https URL with a host,
// or that holds credentials, which belong in a variable of their own.
func checked(ep Endpoint) (Endpoint, error) {
	u, err := url.Parse(ep.BaseURL)
	switch {
	case err != nil, u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return Endpoint{}, fmt.Errorf("%s: want an http or https URL such as http://localhost:8080/v1", ep.From)
	case u.User != nil:
		return Endpoint{}, fmt.Errorf("%s: the URL must not hold credentials: put the key in %s", ep.From, KeyVar)
	}
	ep.BaseURL = strings.TrimSuffix(ep.BaseURL, "/")
	return ep, nil
}

// hostURL turns a host address as Ollama and Docker take it ("host",
// "host:port" or a URL) into a URL without a trailing slash. The
// wildcard address, which servers listen on, is reached on loopback.
func hostURL(host, port string) (string, error) {
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	u, err := url.Parse(host)
	if err != nil || u.Hostname() == "" && u.Port() == "" {
		return "", errors.New("want a host, host:port or URL such as 127.0.0.1:" + port)
	}
	name := u.Hostname()
	if name == "" || name == "0.0.0.0" || name == "::" {
		name = "127.0.0.1"
	}
	if u.Port() != "" {
		port = u.Port()
	} else if u.Scheme == "https" {
		port = "443"
	}
	u.Host = joinHostPort(name, port)
	return strings.TrimSuffix(u.String(), "/"), nil
}

func joinHostPort(host, port string) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + port
}

// Unavailable says why there is no model to use; plain data.
type Unavailable struct {
	// Endpoint is the endpoint tried; From is empty when none could be.
	Endpoint Endpoint
	// Reason says what went wrong, for one line.
	Reason string
}

// Error returns the reason, prefixed with the package name.
func (e *Unavailable) Error() string { return "modelenv: " + e.Reason }

// Find returns the model the environment names, checked to answer within
// ProbeTimeout. When none is configured, or it does not answer, the error
// is an *Unavailable, to be shown with Help.
func Find(ctx context.Context, getenv func(string) string) (*openai.Model, error) {
	ep, err := Lookup(getenv)
	if err != nil {
		return nil, &Unavailable{Reason: err.Error()}
	}
	models, err := probe(ctx, ep, getenv)
	if err != nil {
		return nil, &Unavailable{Endpoint: ep, Reason: err.Error()}
	}
	if ep.Model == "" {
		if len(models) == 0 {
			return nil, &Unavailable{Endpoint: ep, Reason: fmt.Sprintf("%s answers but lists no model: set %s to the model's name", redact(ep.BaseURL), ModelVar)}
		}
		ep.Model = models[0]
	}
	return &openai.Model{BaseURL: ep.BaseURL, Model: ep.Model, APIKeyEnv: ep.KeyEnv}, nil
}

// probe checks that the endpoint answers GET {base}/models and returns the
// models it lists, if it lists any.
func probe(ctx context.Context, ep Endpoint, getenv func(string) string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ep.BaseURL+"/models", nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", ep.From, err)
	}
	if ep.KeyEnv != "" {
		req.Header.Set("Authorization", "Bearer "+getenv(ep.KeyEnv))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		// Only the network's reason: the whole error would repeat the URL
		// with its query.
		var op *net.OpError
		if ctx.Err() == nil && errors.As(err, &op) {
			return nil, fmt.Errorf("%s does not answer: %v", redact(ep.BaseURL), op.Err)
		}
		return nil, fmt.Errorf("%s does not answer within %s", redact(ep.BaseURL), ProbeTimeout)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("%s refused the API key (HTTP %d): check %s", redact(ep.BaseURL), resp.StatusCode, keyName(ep))
	case resp.StatusCode != http.StatusOK:
		return nil, nil // it answers, but lists nothing: the model must be named
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list); err != nil {
		return nil, nil
	}
	var models []string
	for _, m := range list.Data {
		if m.ID != "" {
			models = append(models, m.ID)
		}
	}
	return models, nil
}

func keyName(ep Endpoint) string {
	if ep.KeyEnv == "" {
		return KeyVar + " (unset)"
	}
	return ep.KeyEnv
}

// redact drops the query of a URL, which might hold a key.
func redact(raw string) string {
	if i := strings.IndexByte(raw, '?'); i >= 0 {
		return raw[:i] + "?…"
	}
	return raw
}

// Help is the paragraph shown when there is no model: what went wrong,
// how to start a local model, and which variables to set.
func Help(err error) string {
	var u *Unavailable
	var what string
	switch {
	case !errors.As(err, &u):
		what = fmt.Sprintf("No model can be used (%v)", err)
	case u.Endpoint.From == "":
		what = fmt.Sprintf("The model settings are wrong (%s)", u.Reason)
	case u.Endpoint.Optional:
		what = fmt.Sprintf("No model is configured, and Docker Model Runner cannot be used (%s)", u.Reason)
	default:
		what = fmt.Sprintf("The model named by %s cannot be used (%s)", u.Endpoint.From, u.Reason)
	}
	return wrap(what+`, so the agent cannot run. mini-me talks to any `+
		`OpenAI-compatible chat endpoint. To run a model on this machine, start `+
		`Docker Model Runner ("docker model pull ai/qwen3"; it is found by itself `+
		`on localhost:12434, or set MODEL_RUNNER_HOST) or Ollama ("ollama pull `+
		`qwen3:4b", then set OLLAMA_HOST=127.0.0.1:11434). Or name an endpoint: `+
		`MINIME_MODEL_URL (a base URL ending in /v1) with MINIME_MODEL and, if it `+
		`needs a key, MINIME_API_KEY; or OPENAI_API_KEY (with OPENAI_BASE_URL and `+
		`OPENAI_MODEL for a provider other than OpenAI). With a hosted model, what `+
		`the tools return is sent to that provider.`, 76)
}

// wrap breaks text into lines of at most width bytes, between words.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, word := range strings.Fields(text) {
		switch {
		case n == 0:
		case n+1+len(word) > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}
