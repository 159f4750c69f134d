// Command driver runs gRPC benchmark scenarios against qps workers, with the
// flags of gRPC's qps_json_driver:
//
//	QPS_WORKERS=serverhost:10000,clienthost:10000 \
//	    driver --scenarios_file=scenarios.json --scenario_result_file=result.json
//	driver --quit --qps_workers=serverhost:10000,clienthost:10000
//
// The workers are listed servers first, from --qps_workers, $QPS_WORKERS or
// the file $QPS_WORKERS_FILE names. Each scenario's summary goes to stdout;
// --scenario_result_file receives the ScenarioResult JSON of the last
// scenario run, as gRPC's driver writes it.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/grpcbench/grpcbench/go/qps/driver"
)

type flags struct {
	scenariosFile, scenariosJSON string
	quit                         bool
	resultFile, qpsFile          string
	workers                      string
	setupTimeout                 time.Duration
}

func parseFlags(args []string, stderr io.Writer) (*flags, error) {
	fs := flag.NewFlagSet("driver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &flags{}
	fs.StringVar(&f.scenariosFile, "scenarios_file", "", "JSON `file` of a grpc.testing.Scenarios object: {\"scenarios\": [...]} (default $SCENARIOS_FILE)")
	fs.StringVar(&f.scenariosJSON, "scenarios_json", "", "the same JSON, given inline")
	fs.BoolVar(&f.quit, "quit", false, "tell every worker to quit, and run nothing")
	fs.StringVar(&f.resultFile, "scenario_result_file", "", "`file` for the last scenario's grpc.testing.ScenarioResult, as JSON")
	fs.StringVar(&f.qpsFile, "json_file_out", "", "`file` for {\"qps\": N} of the last scenario, as gRPC's driver writes it")
	fs.StringVar(&f.workers, "qps_workers", "", "workers' driver addresses, `host:port,...`, servers first (default $QPS_WORKERS, else the file $QPS_WORKERS_FILE)")
	fs.DurationVar(&f.setupTimeout, "setup_timeout", time.Minute, "longest wait for a worker outside the measured time: starting, marks, final statistics")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: driver (--scenarios_file=FILE | --scenarios_json=JSON | --quit) [flags]")
		fmt.Fprintln(stderr, "Runs gRPC benchmark scenarios against qps workers (grpc.testing.WorkerService).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	// grpc/test-infra's driver pods name the scenario file in
	// $SCENARIOS_FILE; a driver image of ours reads it from there.
	if f.scenariosFile == "" && f.scenariosJSON == "" && !f.quit {
		f.scenariosFile = os.Getenv("SCENARIOS_FILE")
	}
	given := 0
	for _, set := range []bool{f.scenariosFile != "", f.scenariosJSON != "", f.quit} {
		if set {
			given++
		}
	}
	if given != 1 {
		fs.Usage()
		return nil, errors.New("exactly one of --scenarios_file, --scenarios_json and --quit is needed")
	}
	if f.setupTimeout <= 0 {
		fs.Usage()
		return nil, fmt.Errorf("--setup_timeout must be positive, not %v", f.setupTimeout)
	}
	return f, nil
}

func main() {
	f, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(os.Stderr, "driver: %v\n", err)
		}
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, f, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "driver: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, f *flags, stdout, stderr io.Writer) error {
	workers, err := workerList(f.workers)
	if err != nil {
		return err
	}
	if len(workers) == 0 {
		return errors.New("no workers: name them with --qps_workers or $QPS_WORKERS (host:port,..., servers first)")
	}
	if f.quit {
		return quitWorkers(ctx, workers, f.setupTimeout)
	}
	data := []byte(f.scenariosJSON)
	if f.scenariosFile != "" {
		if data, err = os.ReadFile(f.scenariosFile); err != nil {
			return err
		}
	}
	scenarios, err := driver.ParseScenarios(data)
	if err != nil {
		return err
	}
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "driver: "+format+"\n", args...) }
	for _, sc := range scenarios.Scenarios {
		logf("running scenario %s", sc.Name)
		result, err := driver.Run(ctx, sc, driver.Options{Workers: workers, SetupTimeout: f.setupTimeout, Logf: logf})
		if err != nil {
			return fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		printSummary(stdout, result)
		if f.resultFile != "" {
			if err := writeJSON(f.resultFile, result); err != nil {
				return err
			}
		}
		if f.qpsFile != "" {
			if err := os.WriteFile(f.qpsFile, fmt.Appendf(nil, "{\"qps\": %v}\n", result.Summary.Qps), 0o644); err != nil {
				return err
			}
		}
		for i, ok := range append(result.ClientSuccess, result.ServerSuccess...) {
			if !ok {
				return fmt.Errorf("scenario %s: worker %d did not end cleanly", sc.Name, i)
			}
		}
	}
	return nil
}

func workerList(flagValue string) ([]string, error) {
	if flagValue != "" {
		return driver.ParseWorkers(flagValue)
	}
	return driver.WorkersFromEnv()
}

func quitWorkers(ctx context.Context, workers []string, timeout time.Duration) error {
	var failed []error
	for _, addr := range workers {
		err := func() error {
			conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				return err
			}
			defer conn.Close()
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			_, err = testgrpc.NewWorkerServiceClient(conn).QuitWorker(ctx, &testpb.Void{}, grpc.WaitForReady(true))
			return err
		}()
		if err != nil {
			failed = append(failed, fmt.Errorf("worker %s could not be quit: %w", addr, err))
		}
	}
	return errors.Join(failed...)
}

// writeJSON writes m as protojson in the JSON field names gRPC's driver
// uses, re-indented: protojson varies its whitespace from build to build on
// purpose, and a result file should not.
func writeJSON(path string, m proto.Message) error {
	raw, err := protojson.Marshal(m)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	return os.WriteFile(path, out.Bytes(), 0o644)
}

// printSummary prints what gRPC's driver reports for a scenario, latencies
// in microseconds and CPU times as percent of one core.
func printSummary(w io.Writer, r *testpb.ScenarioResult) {
	s := r.Summary
	fmt.Fprintf(w, "scenario: %s\n", r.Scenario.GetName())
	fmt.Fprintf(w, "  QPS: %.1f\n", s.Qps)
	fmt.Fprintf(w, "  QPS per server core: %.1f (server cores: %v)\n", s.QpsPerServerCore, r.ServerCores)
	fmt.Fprintf(w, "  latencies (50/90/95/99/99.9%%-ile): %.1f/%.1f/%.1f/%.1f/%.1f us\n",
		s.Latency_50/1e3, s.Latency_90/1e3, s.Latency_95/1e3, s.Latency_99/1e3, s.Latency_999/1e3)
	fmt.Fprintf(w, "  server system time: %.2f%%  user time: %.2f%%\n", s.ServerSystemTime, s.ServerUserTime)
	fmt.Fprintf(w, "  client system time: %.2f%%  user time: %.2f%%\n", s.ClientSystemTime, s.ClientUserTime)
	fmt.Fprintf(w, "  server queries per CPU second: %.1f  client: %.1f\n", s.ServerQueriesPerCpuSec, s.ClientQueriesPerCpuSec)
	if len(r.RequestResults) > 0 {
		fmt.Fprintf(w, "  successful requests/s: %.1f  failed requests/s: %.1f\n", s.SuccessfulRequestsPerSecond, s.FailedRequestsPerSecond)
	}
}
