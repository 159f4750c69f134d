package features_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os/exec"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/internal/runfile"
)

var grpccall = flag.String("grpccall", "", "rlocation of //lisp/grpccall, clgrpc's command-line caller")

// outcome is what grpccall printed for one call.
type outcome struct {
	Call     int      `json:"call"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	Response string   `json:"response"`
	Ms       int      `json:"ms"`
	Details  []detail `json:"details"`
}

// detail is one detail of a rich error, as grpccall prints it.
type detail struct {
	TypeURL string `json:"type_url"`
	Value   string `json:"value"` // hex
}

// runGrpccall runs clgrpc's caller against addr (none: args give a
// -target) with args and returns each call's outcome; the caller must
// exit 0 within two minutes.
func runGrpccall(t *testing.T, addr string, args ...string) []outcome {
	t.Helper()
	if addr != "" {
		args = append([]string{"-addr", addr}, args...)
	}
	out, stderr, code := runGrpccallExit(t, args...)
	if code != 0 {
		t.Fatalf("grpccall %q exited %d: %s", args, code, stderr)
	}
	var outcomes []outcome
	lines := bufio.NewScanner(bytes.NewReader(out))
	for lines.Scan() {
		var o outcome
		if err := json.Unmarshal(lines.Bytes(), &o); err != nil {
			t.Fatalf("grpccall printed %q: %v", lines.Text(), err)
		}
		outcomes = append(outcomes, o)
	}
	return outcomes
}

// runGrpccallExit runs clgrpc's caller with args: its stdout, its stderr
// and its exit code.
func runGrpccallExit(t *testing.T, args ...string) ([]byte, string, int) {
	t.Helper()
	if *grpccall == "" {
		t.Fatal("-grpccall is required")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, runfile.Path(*grpccall), args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return stdout.Bytes(), stderr.String(), exit.ExitCode()
	case err != nil:
		t.Fatalf("grpccall %q: %v", args, err)
	}
	return stdout.Bytes(), stderr.String(), 0
}

// statusNames is each outcome's status code name.
func statusNames(outcomes []outcome) []string {
	var names []string
	for _, o := range outcomes {
		names = append(names, o.Code)
	}
	return names
}
