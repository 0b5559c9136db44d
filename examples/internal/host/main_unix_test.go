//go:build unix

package host

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// An interrupt ends the run's context, and the program with status 130,
// whatever error the run returns then.
func TestMainInterrupted(t *testing.T) {
	stdout, stderr, status := runMain(t, "interrupt", "")
	assert.Equal(t, 130, status)
	assert.Empty(t, stdout)
	assert.Equal(t, "prog: interrupted\n", stderr)
}
