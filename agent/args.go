package agent

import (
	"encoding/json"
	"errors"
	"fmt"

	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// ErrInvalidArguments is wrapped by CheckArguments' error: the arguments
// do not match the tool's input schema.
var ErrInvalidArguments = errors.New("agent: invalid tool arguments")

// CheckArguments checks args, the JSON object of arguments of a call of
// st, against the tool's input schema as the agent checks a model's before
// each call it runs, and returns the arguments to send: empty or null
// stands for {}, and null members the schema does not require are
// dropped. A host that calls a tool itself checks the arguments so before
// it asks for approval. The error wraps ErrInvalidArguments and tells every
// problem found (the arguments themselves, clipped, when they are not a
// JSON object).
func CheckArguments(st toolset.Tool, args json.RawMessage) (json.RawMessage, error) {
	clean, _, _, problem := compileSchema(st.Tool.InputSchema).checkArgs(string(args))
	if problem != "" {
		return nil, fmt.Errorf("%w: %s: %s", ErrInvalidArguments, st.Name, problem)
	}
	return clean, nil
}
