package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/cpuset"
	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	"github.com/grpcbench/grpcbench/go/routeguide/features"
)

// loadgenRun is what one run of the whole program produced.
type loadgenRun struct {
	code     int
	stdout   string
	stderr   string       // progress lines
	file     *schema.File // the -out file, validated
	benchfmt string       // the -benchfmt file
}

// runLoadgen runs the whole program with args after the program name and a
// short plan, and reads what it wrote.
func runLoadgen(t *testing.T, args ...string) loadgenRun {
	t.Helper()
	dir := t.TempDir()
	out, benchfmt := filepath.Join(dir, "results.json"), filepath.Join(dir, "results.txt")
	// Unpinned unless a test asks: pinning binds this whole test process.
	args = append([]string{"loadgen", "-out", out, "-benchfmt", benchfmt, "-reps", "1", "-warmup", "0", "-cpus", "off"}, args...)
	var stdout, stderr bytes.Buffer
	code := run(testContext(t), args, &stdout, &stderr)
	t.Logf("stderr:\n%s", &stderr)

	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("exit %d, no results file: %v", code, err)
	}
	if err := schema.Validate(data); err != nil {
		t.Fatalf("results file is invalid: %v\n%s", err, data)
	}
	file, err := schema.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	bf, err := os.ReadFile(benchfmt)
	if err != nil {
		t.Errorf("no benchfmt file: %v", err)
	}
	return loadgenRun{code: code, stdout: stdout.String(), stderr: stderr.String(), file: file, benchfmt: string(bf)}
}

func TestRunMeasuresEveryRPCKind(t *testing.T) {
	addr := startTestServer(t, features.Default())
	res := runLoadgen(t, "-addr", addr, "-clients", "2", "-duration", "200ms")
	code, stdout, file := res.code, res.stdout, res.file
	if code != harness.ExitOK {
		t.Fatalf("exit code %d; stdout:\n%s", code, stdout)
	}
	if !strings.Contains(res.benchfmt, "BenchmarkRouteguide") {
		t.Errorf("benchfmt file has no benchmark line:\n%s", res.benchfmt)
	}
	if file.Suite != "routeguide" || len(file.Results) != 4 {
		t.Fatalf("suite %q with %d results, want routeguide with 4", file.Suite, len(file.Results))
	}
	for i, kind := range []rpcKind{unary, serverStreaming, clientStreaming, bidiStreaming} {
		r := file.Results[i]
		if want := "go/" + string(kind) + "/clients=2"; r.Scenario != want || r.Status != schema.StatusOK {
			t.Errorf("result %d: %s %s (%s), want %s ok", i, r.Scenario, r.Status, r.Error, want)
			continue
		}
		wantParams := map[string]any{"impl": "go", "rpc": string(kind), "clients": 2.0,
			"duration": "200ms", "conns": "per-client", "client": "go"}
		for k, v := range wantParams {
			if r.Parameters[k] != v {
				t.Errorf("%s: parameter %s = %v, want %v", r.Scenario, k, r.Parameters[k], v)
			}
		}
		if _, ok := r.Parameters["stream_msgs"]; !ok {
			t.Errorf("%s: no stream_msgs parameter", r.Scenario)
		}
		if m, ok := r.Metric(schema.MetricReqPerSec); !ok || m.Median <= 0 {
			t.Errorf("%s: req/s %v", r.Scenario, m.Reps)
		}
		if m, ok := r.Metric(schema.MetricErrors); !ok || m.Max != 0 {
			t.Errorf("%s: errors %v", r.Scenario, m.Reps)
		}
		if _, ok := r.Metric(schema.MetricMsgPerSec); ok != (kind != unary) {
			t.Errorf("%s: has msg/s = %v", r.Scenario, ok)
		}
	}
	for _, want := range []string{"### Scenarios", "| go/bidi_streaming/clients=2 | ok |", "p99"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

func TestRunRecordsAFailedScenarioAndGoesOn(t *testing.T) {
	addr := startBrokenServer(t)
	res := runLoadgen(t, "-addr", addr, "-impl", "lisp", "-rpcs", "bidi,unary",
		"-clients", "1", "-duration", "100ms", "-conns", "shared")
	code, stdout, file := res.code, res.stdout, res.file
	if code != harness.ExitFailed {
		t.Errorf("exit code %d, want %d", code, harness.ExitFailed)
	}
	if len(file.Results) != 2 {
		t.Fatalf("%d results, want 2", len(file.Results))
	}
	for _, r := range file.Results {
		if r.Status != schema.StatusError || r.Error == "" {
			t.Errorf("%s: status %s (%q), want error", r.Scenario, r.Status, r.Error)
		}
	}
	// Clients sharing one connection: a suite of its own, named so.
	if file.Suite != sharedConnSuite {
		t.Errorf("suite %q, want %q", file.Suite, sharedConnSuite)
	}
	if r := file.Results[0]; r.Scenario != "lisp/bidi_streaming/clients=1/conns=shared" || !strings.Contains(r.Error, "want 45") {
		t.Errorf("first result %s: %s", r.Scenario, r.Error)
	}
	if !strings.Contains(stdout, "| lisp/unary/clients=1/conns=shared | error: ") {
		t.Errorf("stdout does not show the failure:\n%s", stdout)
	}
}

func TestRunStartsAndStopsTheServer(t *testing.T) {
	// The "server" announces the address of an in-process one and then
	// sleeps: enough for the load generator to measure against, read the
	// process's CPU time, and stop it.
	addr := startTestServer(t, features.Default())
	pidFile := filepath.Join(t.TempDir(), "pid")
	t.Setenv("FAKE_SERVER_ADDR", addr)
	t.Setenv("FAKE_SERVER_PID_FILE", pidFile)
	server := writeScript(t, "server",
		`echo $$ > "$FAKE_SERVER_PID_FILE"; echo "listening on $FAKE_SERVER_ADDR"; exec sleep 30`)

	res := runLoadgen(t, "-server", server, "-rpcs", "unary", "-clients", "1", "-duration", "100ms")
	code, stdout, file := res.code, res.stdout, res.file
	if code != harness.ExitOK {
		t.Fatalf("exit code %d; stdout:\n%s", code, stdout)
	}
	r := file.Results[0]
	if r.Status != schema.StatusOK {
		t.Fatalf("%s: %s %s", r.Scenario, r.Status, r.Error)
	}
	if _, ok := r.Metric(schema.MetricServerCPU); !ok {
		t.Errorf("no server CPU metric although the load generator started the server")
	}
	// What the server held, beside what it spent: the sleep that stands for
	// it has one thread and some resident memory.
	if m, ok := r.Metric(schema.MetricServerThreads); !ok || m.Median != 1 {
		t.Errorf("server threads %+v (%v), want 1", m, ok)
	}
	if m, ok := r.Metric(schema.MetricServerRSS); !ok || m.Median <= 0 {
		t.Errorf("server RSS %+v (%v), want some", m, ok)
	}
	if got := file.Environment.Extra["server"]; got != "go server" {
		t.Errorf("environment records server %q", got)
	}
	if got := file.Environment.Extra["server_sha256"]; len(got) != 64 {
		t.Errorf("environment records server digest %q", got)
	}
	if got := file.Environment.Extra["cpus"]; got != "unpinned: -cpus off" {
		t.Errorf("environment records cpus %q", got)
	}
	expectStopped(t, pidFile)
}

// TestPinnedRun gives the server and the load generator one CPU each and
// checks where the server ran and what the results record. It restores
// this test process's CPUs afterwards.
func TestPinnedRun(t *testing.T) {
	usable, err := cpuset.Usable()
	if err != nil || len(usable) < 2 {
		t.Skipf("needs two usable CPUs: %v, %v", usable, err)
	}
	procs := runtime.GOMAXPROCS(0)
	t.Cleanup(func() {
		if err := cpuset.PinProcess(usable); err != nil {
			t.Errorf("restoring CPUs %s: %v", usable, err)
		}
		runtime.GOMAXPROCS(procs)
	})
	server, client := usable[:1], usable[1:2]
	addr := startTestServer(t, features.Default())
	cpusFile := filepath.Join(t.TempDir(), "cpus")
	t.Setenv("FAKE_SERVER_ADDR", addr)
	t.Setenv("FAKE_SERVER_CPUS_FILE", cpusFile)
	script := writeScript(t, "server", `while read -r key value; do
  [ "$key" = Cpus_allowed_list: ] && echo "$value" > "$FAKE_SERVER_CPUS_FILE"
done < /proc/$$/status
echo "listening on $FAKE_SERVER_ADDR"; exec sleep 30`)

	res := runLoadgen(t, "-server", script, "-rpcs", "unary", "-clients", "1", "-duration", "100ms",
		"-cpus", server.String()+"/"+client.String())
	if res.code != harness.ExitOK {
		t.Fatalf("exit code %d; stdout:\n%s", res.code, res.stdout)
	}
	if got, _ := os.ReadFile(cpusFile); strings.TrimSpace(string(got)) != server.String() {
		t.Errorf("the server ran on CPUs %q, want %s", got, server)
	}
	if now, _ := cpuset.Usable(); !slices.Equal(now, client) {
		t.Errorf("the load generator ran on CPUs %s, want %s", now, client)
	}
	env := res.file.Environment
	if env.Extra["server_cpus"] != server.String() || env.Extra["client_cpus"] != client.String() || env.GOMAXPROCS != 1 {
		t.Errorf("environment records server_cpus %q, client_cpus %q, GOMAXPROCS %d; want %s, %s, 1",
			env.Extra["server_cpus"], env.Extra["client_cpus"], env.GOMAXPROCS, server, client)
	}
}

// expectStopped fails unless the process whose pid the fake server wrote to
// pidFile has exited (or is a zombie awaiting its parent) within a few
// seconds. The server's process-group handling is tested in
// go/bench/serverproc; this checks that the load generator stops it.
func expectStopped(t *testing.T, pidFile string) {
	t.Helper()
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	stat := "/proc/" + strings.TrimSpace(string(data)) + "/stat"
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(stat)
		if err != nil {
			return // gone
		}
		// The state follows the parenthesised command name.
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); f[0] == "Z" || f[0] == "X" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %s is still running", stat)
		}
	}
}

func TestRunRecordsAServerThatDoesNotStart(t *testing.T) {
	server := writeScript(t, "server", "echo 'no database' >&2; exit 3")
	res := runLoadgen(t, "-server", server, "-rpcs", "unary,bidi", "-clients", "1,10")
	code, file := res.code, res.file
	if code != harness.ExitFailed {
		t.Errorf("exit code %d, want %d", code, harness.ExitFailed)
	}
	if len(file.Results) != 4 {
		t.Fatalf("%d results, want one per scenario (4)", len(file.Results))
	}
	for _, r := range file.Results {
		if r.Status != schema.StatusError || !strings.Contains(r.Error, "exit status 3") {
			t.Errorf("%s: %s %q, want an error with the exit status", r.Scenario, r.Status, r.Error)
		}
		if r.Parameters["rpc"] == nil || r.Parameters["clients"] == nil {
			t.Errorf("%s: parameters %v, want them for the report's tables", r.Scenario, r.Parameters)
		}
	}
}

// TestOpenLoopRun offers 200 and then 400 unary calls per second for 250
// ms (a sweep): the results are their own suite, one scenario per rate that
// says its rate, the calls made are the ones due, and each records its send
// lag.
func TestOpenLoopRun(t *testing.T) {
	addr := startTestServer(t, features.Default())
	res := runLoadgen(t, "-addr", addr, "-rpcs", "unary", "-clients", "4", "-duration", "250ms", "-rate", "200,400")
	if res.code != harness.ExitOK {
		t.Fatalf("exit code %d; stdout:\n%s", res.code, res.stdout)
	}
	if res.file.Suite != "routeguide_openloop" || len(res.file.Results) != 2 {
		t.Fatalf("suite %q with %d results, want routeguide_openloop with 2", res.file.Suite, len(res.file.Results))
	}
	for i, rate := range []float64{200, 400} {
		r := res.file.Results[i]
		if r.Scenario != fmt.Sprintf("go/unary/clients=4/rate=%g", rate) || r.Parameters["rate"] != rate {
			t.Errorf("scenario %q, rate parameter %v", r.Scenario, r.Parameters["rate"])
		}
		if m, ok := r.Metric(schema.MetricOps); !ok || m.Median != rate/4 {
			t.Errorf("ops %v, want the %g due in 250 ms at %g/s", m.Reps, rate/4, rate)
		}
		for _, name := range []string{schema.MetricLatencyP999, schema.MetricSendLagP99} {
			if _, ok := r.Metric(name); !ok {
				t.Errorf("%s: no %s", r.Scenario, name)
			}
		}
	}
}

// -server_args reach the started server after its -addr, and the results
// record them, so that a tuned server shows as one.
func TestRunPassesServerArgs(t *testing.T) {
	addr := startTestServer(t, features.Default())
	argsFile := filepath.Join(t.TempDir(), "args")
	t.Setenv("FAKE_SERVER_ADDR", addr)
	t.Setenv("FAKE_SERVER_ARGS_FILE", argsFile)
	server := writeScript(t, "server",
		`echo "$@" > "$FAKE_SERVER_ARGS_FILE"; echo "listening on $FAKE_SERVER_ADDR"; exec sleep 30`)

	res := runLoadgen(t, "-server", server, "-server_args", "-unary_inline  -x=1", "-rpcs", "unary", "-clients", "1", "-duration", "50ms")
	if res.code != harness.ExitOK {
		t.Fatalf("exit code %d; stdout:\n%s", res.code, res.stdout)
	}
	args, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(args)), "-addr 127.0.0.1:0 -unary_inline -x=1"; got != want {
		t.Errorf("server started with %q, want %q", got, want)
	}
	if got := res.file.Environment.Extra[schema.ExtraServerArgs]; got != "-unary_inline -x=1" {
		t.Errorf("environment records server_args %q", got)
	}
}

// TestRivalTakesTurns starts two servers, -server and -rival, and checks
// that every scenario is measured against both, repetition by repetition in
// turn with the first turn rotating, and that the results tell the two
// apart: scenario names, the impl parameter and each server's provenance.
func TestRivalTakesTurns(t *testing.T) {
	t.Setenv("FAKE_SERVER_ADDR", startTestServer(t, features.Default()))
	t.Setenv("FAKE_RIVAL_ADDR", startTestServer(t, features.Default()))
	server := writeScript(t, "server", `echo "listening on $FAKE_SERVER_ADDR"; exec sleep 30`)
	rival := writeScript(t, "rival", `echo "listening on $FAKE_RIVAL_ADDR"; exec sleep 30`)

	dir := t.TempDir()
	out := filepath.Join(dir, "results.json")
	var stdout, stderr bytes.Buffer
	code := run(testContext(t), []string{"loadgen", "-out", out, "-benchfmt", filepath.Join(dir, "results.txt"),
		"-cpus", "off", "-warmup", "0", "-reps", "3", "-rpcs", "unary", "-clients", "1", "-duration", "30ms",
		"-server", server, "-rival", rival, "-rival_impl", "lisp", "-rival_args", "-unary_inline"}, &stdout, &stderr)
	if code != harness.ExitOK {
		t.Fatalf("exit code %d; stderr:\n%s", code, &stderr)
	}
	order := turnOrder(stderr.String())
	if got, want := order, "go lisp lisp go go lisp"; got != want {
		t.Errorf("repetitions ran in the order %q, want %q; stderr:\n%s", got, want, &stderr)
	}

	file, err := schema.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(file.Results) != 2 {
		t.Fatalf("%d results, want one per server", len(file.Results))
	}
	for i, impl := range []string{"go", "lisp"} {
		r := file.Results[i]
		m, _ := r.Metric(schema.MetricReqPerSec)
		if r.Status != schema.StatusOK || r.Scenario != impl+"/unary/clients=1" || r.Parameters["impl"] != impl || len(m.Reps) != 3 {
			t.Errorf("result %d: %s %s, impl %v, %d repetitions: %s", i, r.Scenario, r.Status, r.Parameters["impl"], len(m.Reps), r.Error)
		}
	}
	extra := file.Environment.Extra
	for key, want := range map[string]string{
		schema.ExtraServer:                               "go server",
		schema.ExtraRivalPrefix + schema.ExtraServer:     "lisp server (rival)",
		schema.ExtraRivalPrefix + schema.ExtraServerArgs: "-unary_inline",
		// The two servers took turns: their repetitions pair by round.
		schema.ExtraRepsPaired: schema.PairedByRound,
	} {
		if extra[key] != want {
			t.Errorf("environment %s = %q, want %q", key, extra[key], want)
		}
	}
	if len(extra[schema.ExtraRivalPrefix+schema.ExtraServerSHA256]) != 64 || extra[schema.ExtraServerArgs] != "" {
		t.Errorf("environment: rival digest %q, server args %q", extra[schema.ExtraRivalPrefix+schema.ExtraServerSHA256], extra[schema.ExtraServerArgs])
	}
}

// turnOrder is the servers, by label, in the order their repetitions ran,
// from the load generator's progress lines.
func turnOrder(progress string) string {
	var order []string
	for _, line := range strings.Split(progress, "\n") {
		if name, _, ok := strings.Cut(strings.TrimPrefix(line, "[routeguide] "), " rep "); ok && strings.Contains(line, ": ") {
			order = append(order, strings.SplitN(name, "/", 2)[0])
		}
	}
	return strings.Join(order, " ")
}

// TestVariantTakesTurns: a variant (the rival's binary with an argument
// added) is measured in the same turns as the two servers, in a Williams
// order of three, and recorded under its own label and keys.
func TestVariantTakesTurns(t *testing.T) {
	t.Setenv("FAKE_SERVER_ADDR", startTestServer(t, features.Default()))
	t.Setenv("FAKE_RIVAL_ADDR", startTestServer(t, features.Default()))
	server := writeScript(t, "server", `echo "listening on $FAKE_SERVER_ADDR"; exec sleep 30`)
	argsFile := filepath.Join(t.TempDir(), "args")
	t.Setenv("FAKE_ARGS_FILE", argsFile)
	rival := writeScript(t, "rival", `echo "$*" >> "$FAKE_ARGS_FILE"; echo "listening on $FAKE_RIVAL_ADDR"; exec sleep 30`)

	dir := t.TempDir()
	out := filepath.Join(dir, "results.json")
	var stdout, stderr bytes.Buffer
	code := run(testContext(t), []string{"loadgen", "-out", out, "-benchfmt", filepath.Join(dir, "results.txt"),
		"-cpus", "off", "-warmup", "0", "-reps", "3", "-rpcs", "unary", "-clients", "1", "-duration", "30ms",
		"-server", server, "-rival", rival, "-rival_impl", "lisp", "-variant", "lisp_tuned=lisp:-unary_inline"}, &stdout, &stderr)
	if code != harness.ExitOK {
		t.Fatalf("exit code %d; stderr:\n%s", code, &stderr)
	}
	order := turnOrder(stderr.String())
	if got, want := order, "go lisp lisp_tuned lisp lisp_tuned go lisp_tuned go lisp"; got != want {
		t.Errorf("repetitions ran in the order %q, want %q", got, want)
	}
	args, _ := os.ReadFile(argsFile)
	if got := strings.Fields(strings.ReplaceAll(string(args), "\n", " | ")); !slices.Contains(got, "-unary_inline") {
		t.Errorf("the rival's binary was started with %q, never with -unary_inline", args)
	}
	file, err := schema.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(file.Results) != 3 || file.Results[2].Scenario != "lisp_tuned/unary/clients=1" || file.Results[2].Status != schema.StatusOK {
		t.Fatalf("results %+v", file.Results)
	}
	extra := file.Environment.Extra
	if extra["variant_lisp_tuned_server"] != "lisp_tuned server (rival)" || extra["variant_lisp_tuned_server_args"] != "-unary_inline" ||
		len(extra["variant_lisp_tuned_server_sha256"]) != 64 {
		t.Errorf("environment %v", extra)
	}
}

// TestRivalAtConnectionScale: with -total_conns, the two servers still take
// turns, but each turn opens its own connections and closes them after, so
// that one server at a time holds them: each server accepts a fresh set
// (its client and its idle connections) per repetition, never holds two
// turns' sets at once (it may still be closing a few of the last turn's when
// the next arrive: these servers run in the test process, where the load
// generator cannot see their sockets), and holds none once the run is over;
// each turn warms up;
// and each result carries the connection-scale metrics of every repetition.
func TestRivalAtConnectionScale(t *testing.T) {
	serverAddr, serverConns := startCountingTestServer(t)
	rivalAddr, rivalConns := startCountingTestServer(t)
	t.Setenv("FAKE_SERVER_ADDR", serverAddr)
	t.Setenv("FAKE_RIVAL_ADDR", rivalAddr)
	server := writeScript(t, "server", `echo "listening on $FAKE_SERVER_ADDR"; exec sleep 30`)
	rival := writeScript(t, "rival", `echo "listening on $FAKE_RIVAL_ADDR"; exec sleep 30`)

	const reps, total = 3, 4
	res := runLoadgen(t, "-reps", strconv.Itoa(reps), "-warmup", "1", "-rpcs", "unary", "-clients", "1",
		"-duration", "30ms", "-total_conns", strconv.Itoa(total), "-server", server, "-rival", rival, "-rival_impl", "lisp")
	if res.code != harness.ExitOK {
		t.Fatalf("exit code %d", res.code)
	}
	if got := strings.Count(res.stderr, "warm-up"); got != 2*reps {
		t.Errorf("%d warm-ups, want one per turn (%d)", got, 2*reps)
	}
	for name, lis := range map[string]*countingListener{"server": serverConns, "rival": rivalConns} {
		accepted, _, peak := lis.counts()
		if accepted != reps*total || peak >= 2*total {
			t.Errorf("the %s accepted %d connections, at most %d at once; want %d (%d a turn, %d turns), fewer than %d at once",
				name, accepted, peak, reps*total, total, reps, 2*total)
		}
		deadline := time.Now().Add(5 * time.Second)
		for _, open, _ := lis.counts(); open > 0; _, open, _ = lis.counts() {
			if time.Now().After(deadline) {
				t.Errorf("the %s still holds %d connections after the run", name, open)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if len(res.file.Results) != 2 {
		t.Fatalf("%d results, want one per server", len(res.file.Results))
	}
	for i, impl := range []string{"go", "lisp"} {
		r := res.file.Results[i]
		rss, _ := r.Metric(schema.MetricServerRSS)
		if r.Status != schema.StatusOK || r.Scenario != impl+"/unary/clients=1/conns=4" || len(rss.Reps) != reps || r.Parameters["connections"] != "per turn" {
			t.Errorf("result %d: %s %s, %d RSS repetitions, connections %v: %s", i, r.Scenario, r.Status, len(rss.Reps), r.Parameters["connections"], r.Error)
		}
	}
}
