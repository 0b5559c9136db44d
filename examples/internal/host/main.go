package host

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// Run is an example program's body: it works until done or until ctx is
// done, reading its arguments (without the program's name) and stdin, and
// writing to stdout.
type Run func(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error

// Main runs run as the program named name and exits: with status 0 when
// run returns nil, 1 when it returns an error, which it prints on stderr,
// and 130 when the program was interrupted (SIGINT or SIGTERM, which end
// run's context). Call it from main, last.
func Main(name string, run Run) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout)
	code := exitStatus(ctx, name, err, os.Stderr)
	stop()
	os.Exit(code)
}

// exitStatus returns the status of a program named name whose run ended
// with err, and says on stderr why it is not 0.
func exitStatus(ctx context.Context, name string, err error, stderr io.Writer) int {
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, name+": interrupted")
		return 130
	case err != nil:
		fmt.Fprintln(stderr, name+":", err)
		return 1
	}
	return 0
}

// Question returns the program's arguments as one question, the words
// joined by spaces, or def when there are none.
func Question(args []string, def string) string {
	if len(args) == 0 {
		return def
	}
	return strings.Join(args, " ")
}

// CloseTools closes tools, giving its servers at most 5 s to end. It is
// for a program that is ending, which has nothing to do with an error.
func CloseTools(tools *mcp.Toolset) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = tools.Close(ctx)
}
