// Command client runs gRPC interop test cases against a
// grpc.testing.TestService server, one case per run:
//
//	client -server_host 127.0.0.1 -server_port 10000 -test_case large_unary
//
// It takes the flags of grpc-go's interop client
// (google.golang.org/grpc/interop/client) for the cases that need no
// credentials beyond TLS, or xDS, and runs them through the same exported functions of
// google.golang.org/grpc/interop. That main package also links xDS, Google
// credentials and OpenTelemetry, which none of these cases use; leaving them
// out builds far fewer packages. grpc-go's client has no compression cases,
// so those four are here (compression.go), written from gRPC's interop test
// descriptions.
//
// A passing case prints "PASS NAME" and exits 0. A failing one exits 1 with
// the reason on stderr (the interop package's own fatal log line). A bad
// command line exits 2 with the usage.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/interop"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
)

var (
	serverHost = flag.String("server_host", "127.0.0.1", "the server's `host`")
	serverPort = flag.Int("server_port", 10000, "the server's `port`")
	testCase   = flag.String("test_case", "large_unary", "the `case` to run")

	soakIterations  = flag.Int("soak_iterations", 10, "calls in rpc_soak and channel_soak")
	soakMaxFailures = flag.Int("soak_max_failures", 0, "soak calls that may fail or be too slow")
	soakMaxLatency  = flag.Int("soak_per_iteration_max_acceptable_latency_ms", 1000,
		"the longest a soak call may take, in `ms`")
	soakOverall = flag.Int("soak_overall_timeout_seconds", 10,
		"the time all soak calls together may take, in `seconds`")
)

// testCase is one case: it returns if the case passes and exits the
// process (the interop package's logger.Fatal) if it fails.
type testCaseFunc func(ctx context.Context, conn *grpc.ClientConn, addr string)

func withTestService(f func(context.Context, testgrpc.TestServiceClient, ...grpc.CallOption)) testCaseFunc {
	return func(ctx context.Context, conn *grpc.ClientConn, _ string) {
		f(ctx, testgrpc.NewTestServiceClient(conn))
	}
}

var cases = map[string]testCaseFunc{
	"empty_unary":                 withTestService(interop.DoEmptyUnaryCall),
	"large_unary":                 withTestService(interop.DoLargeUnaryCall),
	"client_compressed_unary":     withTestService(doClientCompressedUnary),
	"server_compressed_unary":     withTestService(doServerCompressedUnary),
	"client_streaming":            withTestService(interop.DoClientStreaming),
	"client_compressed_streaming": withTestService(doClientCompressedStreaming),
	"server_streaming":            withTestService(interop.DoServerStreaming),
	"server_compressed_streaming": withTestService(doServerCompressedStreaming),
	"ping_pong":                   withTestService(interop.DoPingPong),
	"messages_beyond_the_window":  withTestService(doMessagesBeyondTheWindow),
	"empty_stream":                withTestService(interop.DoEmptyStream),
	"cancel_after_begin":          withTestService(interop.DoCancelAfterBegin),
	"cancel_after_first_response": withTestService(interop.DoCancelAfterFirstResponse),
	"timeout_on_sleeping_server":  withTestService(interop.DoTimeoutOnSleepingServer),
	"custom_metadata":             withTestService(interop.DoCustomMetadata),
	"status_code_and_message":     withTestService(interop.DoStatusCodeAndMessage),
	"special_status_message":      withTestService(interop.DoSpecialStatusMessage),
	"unimplemented_method": func(ctx context.Context, conn *grpc.ClientConn, _ string) {
		interop.DoUnimplementedMethod(ctx, conn)
	},
	"unimplemented_service": func(ctx context.Context, conn *grpc.ClientConn, _ string) {
		interop.DoUnimplementedService(ctx, testgrpc.NewUnimplementedServiceClient(conn))
	},
	"rpc_soak": func(ctx context.Context, conn *grpc.ClientConn, addr string) {
		config := soakConfig(addr)
		config.ChannelForTest = func() (*grpc.ClientConn, func()) { return conn, func() {} }
		interop.DoSoakTest(ctx, config)
	},
	"channel_soak": func(ctx context.Context, _ *grpc.ClientConn, addr string) {
		config := soakConfig(addr)
		config.ChannelForTest = func() (*grpc.ClientConn, func()) {
			cc := dial(addr)
			return cc, func() { cc.Close() }
		}
		interop.DoSoakTest(ctx, config)
	},
}

// soakConfig is the soak tests' configuration as grpc-go's client builds it
// from the same flags, with the large_unary sizes.
func soakConfig(addr string) interop.SoakTestConfig {
	return interop.SoakTestConfig{
		RequestSize:                      271828,
		ResponseSize:                     314159,
		PerIterationMaxAcceptableLatency: time.Duration(*soakMaxLatency) * time.Millisecond,
		OverallTimeout:                   time.Duration(*soakOverall) * time.Second,
		ServerAddr:                       addr,
		NumWorkers:                       1,
		Iterations:                       *soakIterations,
		MaxFailures:                      *soakMaxFailures,
	}
}

func dial(addr string) *grpc.ClientConn {
	creds, err := transportCredentials()
	if err != nil {
		fmt.Fprintf(os.Stderr, "client: %v\n", err)
		os.Exit(1)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds), grpc.WithStatsHandler(received))
	if err != nil {
		fmt.Fprintf(os.Stderr, "client: %v\n", err)
		os.Exit(1)
	}
	return conn
}

func caseNames() []string {
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func usageError(format string, a ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", a...)
	flag.Usage()
	os.Exit(2)
}

func main() {
	flag.Parse()
	run, ok := cases[*testCase]
	switch {
	case flag.NArg() > 0:
		usageError("unexpected arguments: %q", flag.Args())
	case !ok:
		usageError("-test_case %q is not one of %s", *testCase, strings.Join(caseNames(), ", "))
	case *serverPort < 1 || *serverPort > 65535:
		usageError("-server_port %d is not from 1 to 65535", *serverPort)
	}
	if _, err := transportCredentials(); err != nil {
		usageError("%v", err)
	}
	addr := net.JoinHostPort(*serverHost, strconv.Itoa(*serverPort))
	conn := dial(addr)
	defer conn.Close()
	// As grpc-go's client: the soak cases get their overall limit and a
	// margin, and every case a deadline, so that nothing hangs.
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*soakOverall)*time.Second+30*time.Second)
	defer cancel()
	run(ctx, conn, addr)
	fmt.Printf("PASS %s\n", *testCase)
}
