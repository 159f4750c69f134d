package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// Exit codes of every suite's command.
const (
	ExitOK     = 0
	ExitFailed = 1 // a scenario failed, or the results could not be written
	ExitUsage  = 2 // a bad command line
)

// SignalContext is the context a suite's main runs under: the first SIGINT
// or SIGTERM cancels it, so that the suite stops its servers and still
// writes the results measured so far; a second one kills the process the
// default way (started servers die with it through Pdeathsig).
func SignalContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	return ctx, stop
}

// Finish ends a suite's run the one way every suite does: it prints the
// suite's summary table (if any) and then, through Emit, the report to
// stdout, writes -out and -benchfmt, lists each failed scenario on log,
// and returns the exit code: ExitFailed when the results could not be
// written or any scenario failed, else ExitOK. pkg is the suite's import
// path, for the benchfmt header.
func (f *Flags) Finish(stdout, log io.Writer, file *schema.File, pkg, summary string) int {
	code := ExitOK
	if summary != "" {
		fmt.Fprintf(stdout, "%s\n", summary)
	}
	if err := f.Emit(stdout, file, pkg); err != nil {
		fmt.Fprintf(log, "%s: writing results: %v\n", file.Suite, err)
		code = ExitFailed
	}
	if ScenarioFailures(log, file) > 0 {
		code = ExitFailed
	}
	return code
}

// SharedLog returns w safe for concurrent writers: a suite's log (stderr)
// has several at once, the progress lines, the copiers of a server's
// output and the run itself. An *os.File already is safe, and is returned
// as it is so that a started server can inherit it directly.
func SharedLog(w io.Writer) io.Writer {
	if _, ok := w.(*os.File); ok {
		return w
	}
	return &lockedWriter{w: w}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
