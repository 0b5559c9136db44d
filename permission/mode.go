package permission

import "fmt"

// Mode says whether a [Policy] asks its [Approver] before a server's tools
// run, in the words a configuration file uses (config.Server.Permissions
// holds one). Its zero value asks, as [ModeAsk] does; any value other than
// [ModeAuto] asks.
type Mode string

const (
	// ModeAsk asks the Approver before every call, unless the user allowed
	// the tool or its server for the session. It is the default.
	ModeAsk Mode = "ask"
	// ModeAuto runs calls without asking, except a tool its server declares
	// destructive (see WithConfirmDestructive) and a tool whose definition
	// changed since it was last allowed (see WithConfirmChanged).
	ModeAuto Mode = "auto"
)

// ParseMode returns the Mode named s, as written in the configuration file:
// "ask" or "auto".
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeAsk, ModeAuto:
		return m, nil
	}
	return ModeAsk, fmt.Errorf("permission: unknown mode %q (want ask or auto)", s)
}
