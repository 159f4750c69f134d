// Package interop_test runs gRPC's interop test cases between clgrpc and
// grpc-go, in every direction, over loopback: grpc-go's interop client (the
// thin driver ./client over google.golang.org/grpc/interop) against the Lisp
// interop server, the Lisp interop client against grpc-go's interop server
// (google.golang.org/grpc/interop/server), Lisp against Lisp, and a subset
// against the arm64 Lisp server under qemu. With -tls_credentials every
// direction runs over TLS (interop_tls_test). The tables of which case
// passes in which direction, in lisp/clgrpc/README.md, are checked against
// the directions below, so they cannot say more than this test proves.
package interop_test

import (
	"context"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/internal/runfile"
)

var (
	goClient        = flag.String("go_client", "", "rlocation of the Go interop client driver")
	goServer        = flag.String("go_server", "", "rlocation of grpc-go's interop server")
	lispClient      = flag.String("lisp_client", "", "rlocation of the Lisp interop client")
	lispServer      = flag.String("lisp_server", "", "rlocation of the Lisp interop server")
	lispServerArm64 = flag.String("lisp_server_arm64", "", "rlocation of the arm64 Lisp interop server's qemu launcher")

	lispServerArm64Executable = flag.String("lisp_server_arm64_executable", "",
		"rlocation of the executable that launcher runs")
)

// cases are the interop cases that need no TLS, credentials or xDS, in the
// order of gRPC's interop test descriptions, and one of ours after
// ping_pong: messages_beyond_the_window, the large-message cases at sizes
// past the stream window, in every kind of call.
var cases = []string{
	"empty_unary", "large_unary", "client_compressed_unary", "server_compressed_unary",
	"client_streaming", "client_compressed_streaming", "server_streaming", "server_compressed_streaming",
	"ping_pong", "messages_beyond_the_window", "empty_stream", "cancel_after_begin", "cancel_after_first_response",
	"timeout_on_sleeping_server", "custom_metadata", "status_code_and_message", "special_status_message",
	"unimplemented_method", "unimplemented_service", "rpc_soak", "channel_soak",
}

// caseNotes mark, in the README table, the cases that are ours rather than
// gRPC's, with the footnote that says so.
var caseNotes = map[string]string{"messages_beyond_the_window": "²"}

// grpcGoServerLacks are the server features that grpc-go's interop server
// does not implement: it neither checks expect_compressed nor compresses
// its responses, so the compression cases cannot pass against it, whoever
// the client is.
var grpcGoServerLacks = map[string]bool{
	"client_compressed_unary": true, "server_compressed_unary": true,
	"client_compressed_streaming": true, "server_compressed_streaming": true,
}

type direction struct {
	title string // the README column
	// configured says whether this test target was given the programs the
	// direction needs: the arm64 direction runs in a target of its own,
	// because the amd64 and arm64 servers share a runfiles path.
	configured func() bool
	client     func() string
	server     func(t *testing.T) string // starts the server, returns its port
	// runs says whether the direction runs a case; outcome is the README cell
	// of a case it does not run.
	runs    func(name string) bool
	outcome string
}

func all(string) bool { return true }

var directions = []direction{
	{
		title:      "Go client → Lisp server",
		configured: func() bool { return *goClient != "" && *lispServer != "" },
		client:     func() string { return *goClient },
		server:     func(t *testing.T) string { return startAnnounced(t, "lisp", *lispServer, 60*time.Second) },
		runs:       all,
	},
	{
		title:      "Lisp client → Go server",
		configured: func() bool { return *lispClient != "" && *goServer != "" },
		client:     func() string { return *lispClient },
		server:     startGoServer,
		runs:       func(name string) bool { return !grpcGoServerLacks[name] },
		outcome:    "n/a¹",
	},
	{
		title:      "Lisp client → Lisp server",
		configured: func() bool { return *lispClient != "" && *lispServer != "" },
		client:     func() string { return *lispClient },
		server:     func(t *testing.T) string { return startAnnounced(t, "lisp", *lispServer, 60*time.Second) },
		runs:       all,
	},
	{
		title:      "Go client → Lisp server (arm64, qemu)",
		configured: func() bool { return *goClient != "" && *lispServerArm64 != "" },
		client:     func() string { return *goClient },
		server: func(t *testing.T) string {
			checkAarch64(t, *lispServerArm64Executable)
			return startAnnounced(t, "lisp-arm64", *lispServerArm64, 180*time.Second)
		},
		runs: all,
	},
}

// TestInterop runs each direction whose programs the target names; a
// target that names none is a mistake.
func TestInterop(t *testing.T) {
	ran := 0
	for _, d := range directions {
		if !d.configured() {
			continue
		}
		ran++
		t.Run(d.title, func(t *testing.T) {
			port := d.server(t)
			for _, name := range cases {
				if !d.runs(name) {
					continue
				}
				t.Run(name, func(t *testing.T) { runCase(t, d.client(), port, name) })
			}
		})
	}
	if ran == 0 {
		t.Fatal("no direction configured: give a client and a server (-go_client, -lisp_server, ...)")
	}
}

// runCase runs one case in a client process of its own: grpc-go's cases
// end the process on failure.
func runCase(t *testing.T, client, port, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sec := transport(t)
	cmd := exec.CommandContext(ctx, runfile.Path(client), append([]string{
		"-server_host", "127.0.0.1", "-server_port", port, "-test_case", name}, sec.clientArgs...)...)
	cmd.Env = sec.env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS "+name) {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

// startAnnounced starts an interop server, which prints "listening on
// HOST:PORT", on a free port, and returns the port.
func startAnnounced(t *testing.T, name, path string, ready time.Duration) string {
	t.Helper()
	sec := transport(t)
	p := startServerIn(t, name, sec.env, ready, path, append([]string{"-port", "0"}, sec.serverArgs...)...)
	sec.checkLibssl(t, p)
	_, port, _ := net.SplitHostPort(p.Addr())
	return port
}

// startGoServer starts grpc-go's interop server, which announces nothing on
// stdout and listens on the port it is given (on every interface; the test
// only ever connects to loopback).
func startGoServer(t *testing.T) string {
	t.Helper()
	p := serverproc.StartListeningForTest(t, "go", func(port string) []string {
		return append([]string{runfile.Path(*goServer), "-port", port}, transport(t).serverArgs...)
	}, 30*time.Second, 10*time.Second)
	_, port, _ := net.SplitHostPort(p.Addr())
	return port
}

// checkAarch64 makes sure that the server under qemu really is an aarch64
// executable.
func checkAarch64(t *testing.T, rlocation string) {
	t.Helper()
	f, err := elf.Open(runfile.Path(rlocation))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 {
		t.Fatalf("%s is a %v executable, want aarch64", rlocation, f.Machine)
	}
}

// tableMarkers are the lines around the README table of the transport under
// test.
func tableMarkers() (begin, end string) {
	name := "interop-table"
	if *tlsCredentials != "" {
		name = "interop-tls-table"
	}
	return "<!-- " + name + ": begin; TestReadmeTable in go/interop checks it -->", "<!-- " + name + ": end -->"
}

// table is the README's case × direction table: "pass" where TestInterop
// runs the case, the direction's own word where it does not.
func table() string {
	var b strings.Builder
	b.WriteString("| case |")
	for _, d := range directions {
		fmt.Fprintf(&b, " %s |", d.title)
	}
	b.WriteString("\n|---|")
	for range directions {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, name := range cases {
		fmt.Fprintf(&b, "| `%s`%s |", name, caseNotes[name])
		for _, d := range directions {
			cell := "pass"
			if !d.runs(name) {
				cell = d.outcome
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestReadmeTable(t *testing.T) {
	text := readReadme(t)
	tableBegin, tableEnd := tableMarkers()
	begin, end := strings.Index(text, tableBegin), strings.Index(text, tableEnd)
	if begin < 0 || end < begin {
		t.Fatal(errors.New("lisp/clgrpc/README.md has no markers " + tableBegin))
	}
	got := strings.TrimSpace(text[begin+len(tableBegin) : end])
	if want := strings.TrimSpace(table()); got != want {
		t.Errorf("the interop table in lisp/clgrpc/README.md is stale; replace it with:\n\n%s", want)
	}
}
