package serverproc

import (
	"io"
	"strings"
	"testing"
)

// TestLog is a Spec.Log for tests: each write of the server's output becomes
// one line of the test's log, prefixed with the server's name.
func TestLog(t testing.TB, name string) io.Writer { return testLog{t, name} }

type testLog struct {
	t    testing.TB
	name string
}

func (l testLog) Write(b []byte) (int, error) {
	l.t.Logf("%s server: %s", l.name, strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
