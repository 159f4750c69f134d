package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// running is a server started through run, as main would start it, with a
// cancel func standing in for SIGTERM.
type running struct {
	addr     string
	shutdown context.CancelFunc
	exit     chan int
	stderr   *bytes.Buffer // read only after exit delivers
	runtime  string        // the stdout line after the announcement
}

func startRun(t *testing.T, args ...string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	r := &running{shutdown: cancel, exit: make(chan int, 1), stderr: new(bytes.Buffer)}
	go func() {
		code := run(ctx, append([]string{"server"}, args...), pw, r.stderr)
		pw.Close()
		r.exit <- code
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.exit:
		case <-time.After(10 * time.Second):
			t.Error("server did not exit")
		}
	})

	lines := make(chan [2]string, 1)
	go func() {
		br := bufio.NewReader(pr)
		first, _ := br.ReadString('\n')
		second, _ := br.ReadString('\n')
		lines <- [2]string{first, second}
		io.Copy(io.Discard, br) // stdout must never block the server
	}()
	select {
	case got := <-lines:
		addr, err := serverproc.ParseAnnouncement(got[0], serverproc.CheckLoopback)
		if err != nil || !strings.HasPrefix(addr, "127.0.0.1:") {
			t.Fatalf("first stdout line = %q, want \"listening on 127.0.0.1:PORT\" (%v)", got[0], err)
		}
		r.addr, r.runtime = addr, strings.TrimSuffix(got[1], "\n")
	case <-time.After(10 * time.Second):
		t.Fatal("no \"listening on\" line within 10s")
	}
	return r
}

func (r *running) waitExit(t *testing.T) int {
	t.Helper()
	select {
	case code := <-r.exit:
		r.exit <- code // leave it for Cleanup
		return code
	case <-time.After(10 * time.Second):
		t.Fatal("server did not exit within 10s of shutdown")
		return -1
	}
}

func dial(t *testing.T, addr string) pb.RouteGuideClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewRouteGuideClient(conn)
}

func rpcCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestServeAndShutdown(t *testing.T) {
	r := startRun(t, "-addr", "127.0.0.1:0", "-max_concurrent_streams", "8")
	c := dial(t, r.addr)

	f, err := c.GetFeature(rpcCtx(t), &pb.Point{Latitude: 409146138, Longitude: -746188906})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Berkshire Valley Management Area Trail, Jefferson, NJ, USA"; f.GetName() != want {
		t.Errorf("GetFeature name = %q, want %q", f.GetName(), want)
	}

	r.shutdown()
	if code := r.waitExit(t); code != exitOK {
		t.Errorf("exit code = %d, want 0; stderr:\n%s", code, r.stderr)
	}
	if _, err := c.GetFeature(rpcCtx(t), &pb.Point{}); err == nil {
		t.Error("GetFeature succeeded after shutdown")
	}
}

func TestTunedServerServes(t *testing.T) {
	// -gc_percent sets this process's collector: put it back afterwards.
	gcPercent := debug.SetGCPercent(100)
	debug.SetGCPercent(gcPercent)
	t.Cleanup(func() { debug.SetGCPercent(gcPercent) })
	r := startRun(t, "-addr", "127.0.0.1:0", "-num_stream_workers", "2", "-shared_write_buffer",
		"-read_buffer_size", "65536", "-write_buffer_size", "65536", "-gc_percent", "400")
	c := dial(t, r.addr)
	// More calls at once than stream workers: the rest get goroutines of their own.
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stream, err := c.ListFeatures(rpcCtx(t), &pb.Rectangle{
				Lo: &pb.Point{Latitude: 400000000, Longitude: -750000000},
				Hi: &pb.Point{Latitude: 420000000, Longitude: -730000000}})
			if err != nil {
				t.Error(err)
				return
			}
			n := 0
			for ; ; n++ {
				if _, err := stream.Recv(); err == io.EOF {
					break
				} else if err != nil {
					t.Error(err)
					return
				}
			}
			if n == 0 {
				t.Error("ListFeatures returned no feature")
			}
		}()
	}
	wg.Wait()
	if got := debug.SetGCPercent(gcPercent); got != 400 {
		t.Errorf("GC percent = %d, want 400", got)
	}
	// The runtime line says what the server runs with: the tuned target.
	if !strings.HasPrefix(r.runtime, "runtime cpus=") || !strings.Contains(r.runtime, " gogc=400 ") {
		t.Errorf("runtime line = %q, want cpus= and gogc=400", r.runtime)
	}
	r.shutdown()
	if code := r.waitExit(t); code != exitOK {
		t.Errorf("exit code = %d, want 0; stderr:\n%s", code, r.stderr)
	}
}

func TestShutdownClosesStreamsThatOutliveTheTimeout(t *testing.T) {
	r := startRun(t, "-addr", "127.0.0.1:0", "-shutdown_timeout", "200ms")
	c := dial(t, r.addr)

	// A chat the client never half-closes would block GracefulStop forever.
	stream, err := c.RouteChat(rpcCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&pb.RouteNote{Location: &pb.Point{}, Message: "hold"}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	r.shutdown()
	if code := r.waitExit(t); code != exitOK {
		t.Errorf("exit code = %d, want 0", code)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("shutdown took %v with a 200ms timeout", d)
	}
	if !strings.Contains(r.stderr.String(), "closing connections") {
		t.Errorf("stderr does not report the forced stop:\n%s", r.stderr)
	}
	if _, err := stream.Recv(); status.Code(err) != codes.Unavailable {
		t.Errorf("open stream got %v after forced stop, want Unavailable", err)
	}
}

func TestCustomDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.json")
	db := `[{"location": {"latitude": 10, "longitude": 20}, "name": "custom place"}]`
	if err := os.WriteFile(path, []byte(db), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startRun(t, "-addr", "127.0.0.1:0", "-db", path)
	f, err := dial(t, r.addr).GetFeature(rpcCtx(t), &pb.Point{Latitude: 10, Longitude: 20})
	if err != nil {
		t.Fatal(err)
	}
	if f.GetName() != "custom place" {
		t.Errorf("GetFeature name = %q, want %q", f.GetName(), "custom place")
	}
}

func TestCommandLineErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.json")
	for _, tc := range []struct {
		args     []string
		code     int
		inStderr string
	}{
		{[]string{"-nope"}, exitUsage, "usage:"},
		{[]string{"extra"}, exitUsage, "unexpected arguments"},
		{[]string{"-max_concurrent_streams", "-1"}, exitUsage, "usage:"},
		{[]string{"-max_concurrent_streams", "4294967296"}, exitUsage, "exceeds"},
		{[]string{"-shutdown_timeout", "-1s"}, exitUsage, "negative"},
		{[]string{"-gc_percent", "-1"}, exitUsage, "negative"},
		{[]string{"-read_buffer_size", "-2"}, exitUsage, "must be -1 or more"},
		{[]string{"-num_stream_workers", "70000"}, exitUsage, "exceeds"},
		{[]string{"-h"}, exitOK, "usage:"},
		{[]string{"-addr", "127.0.0.1:0", "-db", missing}, exitError, "missing.json"},
		{[]string{"-addr", "127.0.0.1:99999"}, exitError, "routeguide server:"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(rpcCtx(t), append([]string{"server"}, tc.args...), &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.inStderr) {
			t.Errorf("run %q: exit %d, stderr %q; want exit %d and stderr containing %q",
				tc.args, code, stderr.String(), tc.code, tc.inStderr)
		}
		if stdout.Len() != 0 {
			t.Errorf("run %q wrote to stdout: %q", tc.args, stdout.String())
		}
	}
}

func TestCPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	r := startRun(t, "-addr", "127.0.0.1:0", "-cpuprofile", path)
	if _, err := dial(t, r.addr).GetFeature(rpcCtx(t), &pb.Point{}); err != nil {
		t.Fatal(err)
	}
	r.shutdown()
	if code := r.waitExit(t); code != exitOK {
		t.Fatalf("exit code = %d, want 0; stderr:\n%s", code, r.stderr)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// pprof's format is a gzipped protocol buffer.
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("%s is not a gzipped pprof profile (%d bytes)", path, len(b))
	}
}
