package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/grpcbench/grpcbench/go/handlercost/wire"
)

// dialServer serves the service on a loopback port for the test's length
// and returns a connection to it.
func dialServer(t *testing.T) *grpc.ClientConn {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer()
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///"+lis.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(wire.Codec{})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func TestMethods(t *testing.T) {
	conn := dialServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, c := range []struct {
		method string
		d      time.Duration
	}{{wire.Fast, 0}, {wire.Sleep, 20 * time.Millisecond}, {wire.Spin, 5 * time.Millisecond}} {
		req := wire.Encode(c.d)
		var resp []byte
		start := time.Now()
		if err := conn.Invoke(ctx, wire.Path(c.method), req, &resp); err != nil {
			t.Fatalf("%s: %v", c.method, err)
		}
		if took := time.Since(start); took < c.d {
			t.Errorf("%s of %v answered after %v", c.method, c.d, took)
		}
		if !bytes.Equal(resp, req) {
			t.Errorf("%s answered %v, want the request %v", c.method, resp, req)
		}
	}
}

func TestBadRequest(t *testing.T) {
	conn := dialServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var resp []byte
	err := conn.Invoke(ctx, wire.Path(wire.Sleep), []byte{1, 2, 3}, &resp)
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a 3-octet request: %v, want INVALID_ARGUMENT", err)
	}
}

func TestServeAnnouncesAndStops(t *testing.T) {
	serveAndStop(t, []string{"server", "-addr", "127.0.0.1:0"}, " gogc=100 ")
}

// The tuned server (the benchmark's go_tuned) takes grpc-go's tuning
// flags, and its runtime line says the collector target they set; a bad
// value is refused with the usage.
func TestTunedServerServes(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	serveAndStop(t, []string{"server", "-addr", "127.0.0.1:0", "-num_stream_workers=4", "-gc_percent=400"}, " gogc=400 ")
	var stderr bytes.Buffer
	if _, err := parseFlags([]string{"server", "-gc_percent=-1"}, &stderr); err == nil || !strings.Contains(stderr.String(), "usage:") {
		t.Errorf("-gc_percent=-1: %v, stderr %q", err, stderr.String())
	}
}

// serveAndStop runs the server with args, checks its announcement and that
// its runtime line holds runtime, then stops it.
func serveAndStop(t *testing.T, args []string, runtime string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	defer r.Close()
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, w, &bytes.Buffer{}) }()
	br := bufio.NewReader(r)
	first, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(first, "listening on 127.0.0.1:") {
		t.Fatalf("first line %q, %v", first, err)
	}
	// Then what its runtime sized itself to, for the load generator.
	second, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(second, "runtime cpus=") || !strings.Contains(second, runtime) ||
		!strings.HasSuffix(second, " heap_report=sigwinch\n") {
		t.Fatalf("second line %q, %v; want a runtime line with %q, ending in heap_report=sigwinch", second, err, runtime)
	}
	go io.Copy(io.Discard, br) // stdout must never block the server
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("exit code %d", code)
	}
}
