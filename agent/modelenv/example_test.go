package modelenv_test

import (
	"fmt"

	"git.rickub.com/bots-garden/mini-me/agent/modelenv"
)

// Ollama's own variable names the endpoint; its OpenAI-compatible API is
// under /v1.
func ExampleLookup() {
	env := map[string]string{"OLLAMA_HOST": "0.0.0.0:11434", "MINIME_MODEL": "qwen3:4b"}
	ep, err := modelenv.Lookup(func(name string) string { return env[name] })
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ep.BaseURL, ep.Model, "from", ep.From)
	// Output: http://127.0.0.1:11434/v1 qwen3:4b from OLLAMA_HOST
}
