package host_test

import (
	"fmt"

	"git.rickub.com/bots-garden/mini-me/examples/internal/host"
)

// Text from a server or a model cannot move the cursor or reorder what
// the terminal shows.
func ExampleClean() {
	fmt.Println(host.Clean("invoice\x1b[2J paid\u202e\nnext line", 40))
	// Output: invoice�[2J paid�⏎next line
}
