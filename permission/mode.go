package permission

import (
	"fmt"
	"strconv"
)

// Mode says whether a [Policy] asks its [Approver] before a server's tools
// run. Its zero value is [ModeAsk]; any value other than [ModeAuto] asks.
// A configuration file's config.Mode says the same in words;
// agent.NewPolicy maps it onto this one.
type Mode int

const (
	// ModeAsk asks the Approver before every call, unless the user allowed
	// the tool or its server for the session. It is the default.
	ModeAsk Mode = iota
	// ModeAuto runs calls without asking, except a tool its server declares
	// destructive (see WithConfirmDestructive) and a tool whose definition
	// changed since it was last allowed (see WithConfirmChanged).
	ModeAuto
)

// ParseMode returns the Mode named s, as written in the configuration file:
// "ask" or "auto".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "ask":
		return ModeAsk, nil
	case "auto":
		return ModeAuto, nil
	}
	return ModeAsk, fmt.Errorf("permission: unknown mode %q (want ask or auto)", s)
}

// String returns "ask" or "auto", the names ParseMode accepts.
func (m Mode) String() string {
	switch m {
	case ModeAsk:
		return "ask"
	case ModeAuto:
		return "auto"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}
