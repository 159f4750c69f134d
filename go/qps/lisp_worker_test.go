package qps_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/internal/runfile"
)

// grpc-go's worker and the Lisp worker serve each other: every pairing of
// server and client, unary and streaming ping-pong, through the driver.
func TestWorkersServeEachOther(t *testing.T) {
	workers := map[string]string{}
	for _, k := range []workerKind{goKind, lispKind} {
		for _, role := range []string{"server", "client"} {
			_, addr := startKind(t, k.name+" "+role+" worker", k)
			workers[k.name+" "+role] = addr
		}
	}
	for _, server := range []string{"go", "lisp"} {
		for _, client := range []string{"go", "lisp"} {
			for _, rpc := range []string{"UNARY", "STREAMING"} {
				name := fmt.Sprintf("%s_server_%s_client_%s", server, client, strings.ToLower(rpc))
				t.Run(name, func(t *testing.T) {
					serverAddr := workers[server+" server"]
					run := runDriver(t, time.Minute, []string{serverAddr, workers[client+" client"]},
						"--scenarios_json="+scenario(name, rpc, 2, 2, 64, 1))
					checkResult(t, run, serverAddr, 1)
					if client == "lisp" && run.result != nil {
						// The Lisp client counts its requests by status, as
						// gRPC's C++ client does; every one succeeded.
						rr := run.result.RequestResults
						if len(rr) != 1 || rr[0].StatusCode != 0 || float64(rr[0].Count) != run.result.Latencies.GetCount() {
							t.Errorf("request results %v; want every one of %v calls OK", rr, run.result.Latencies.GetCount())
						}
					}
				})
			}
		}
	}
}

// The Lisp worker's client and server together: the RPC types that
// grpc-go's benchmark server does not implement, a synchronous server,
// and Poisson load.
func TestLispWorkerClientModes(t *testing.T) {
	_, serverAddr := startKind(t, "lisp server worker", lispKind)
	_, clientAddr := startKind(t, "lisp client worker", lispKind)
	for _, rpc := range []string{"STREAMING_FROM_CLIENT", "STREAMING_FROM_SERVER"} {
		t.Run(strings.ToLower(rpc), func(t *testing.T) {
			run := runDriver(t, time.Minute, []string{serverAddr, clientAddr},
				"--scenarios_json="+scenario(rpc, rpc, 1, 2, 32, 1))
			checkResult(t, run, serverAddr, 1)
		})
	}
	t.Run("sync_server_streaming", func(t *testing.T) {
		// SYNC_SERVER: a thread per streaming call, where the standard
		// scenarios' ASYNC_SERVER has handlers called per message.
		sc := strings.Replace(scenario("sync_server", "STREAMING", 2, 4, 32, 1),
			`"server_type": "ASYNC_SERVER"`, `"server_type": "SYNC_SERVER"`, 1)
		run := runDriver(t, time.Minute, []string{serverAddr, clientAddr}, "--scenarios_json="+sc)
		checkResult(t, run, serverAddr, 1)
	})
	t.Run("poisson", func(t *testing.T) {
		// 400 calls a second offered over 4 calls in flight: the client
		// must pace itself to about that, far below what it could do.
		const offered = 400
		sc := strings.Replace(scenario("poisson", "UNARY", 2, 2, 0, 2), `"closed_loop": {}`,
			fmt.Sprintf(`"poisson": {"offered_load": %d}`, offered), 1)
		run := runDriver(t, time.Minute, []string{serverAddr, clientAddr}, "--scenarios_json="+sc)
		checkResult(t, run, serverAddr, 2)
		if run.result != nil {
			if qps := run.result.Summary.Qps; qps < offered*0.75 || qps > offered*1.25 {
				t.Errorf("qps %.0f under a Poisson load of %d a second; want within 25%%", qps, offered)
			}
		}
	})
}

func dialWorker(t *testing.T, addr string) testgrpc.WorkerServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return testgrpc.NewWorkerServiceClient(conn)
}

func validServerConfig() *testpb.ServerConfig {
	return &testpb.ServerConfig{ServerType: testpb.ServerType_ASYNC_SERVER}
}

func validClientConfig(target string) *testpb.ClientConfig {
	return &testpb.ClientConfig{
		ServerTargets: []string{target}, ClientType: testpb.ClientType_ASYNC_CLIENT,
		OutstandingRpcsPerChannel: 1, ClientChannels: 1, RpcType: testpb.RpcType_UNARY,
		LoadParams:      &testpb.LoadParams{Load: &testpb.LoadParams_ClosedLoop{ClosedLoop: &testpb.ClosedLoopParams{}}},
		PayloadConfig:   &testpb.PayloadConfig{Payload: &testpb.PayloadConfig_SimpleParams{SimpleParams: &testpb.SimpleProtoParams{}}},
		HistogramParams: &testpb.HistogramParams{Resolution: 0.01, MaxPossible: 60e9},
	}
}

// A configuration the Lisp worker cannot honour is refused with
// INVALID_ARGUMENT naming the field, and the worker serves on.
func TestLispWorkerRefusesWhatItCannotHonour(t *testing.T) {
	_, addr := startKind(t, "lisp worker", lispKind)
	w := dialWorker(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	expectInvalid := func(t *testing.T, field string, recv func() error) {
		t.Helper()
		err := recv()
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), field) {
			t.Errorf("got %v; want INVALID_ARGUMENT naming %s", err, field)
		}
	}
	for field, edit := range map[string]func(*testpb.ServerConfig){
		"server_config.security_params": func(c *testpb.ServerConfig) { c.SecurityParams = &testpb.SecurityParams{UseTestCa: true} },
		"server_config.server_type":     func(c *testpb.ServerConfig) { c.ServerType = testpb.ServerType_ASYNC_GENERIC_SERVER },
		"payload_config.bytebuf_params": func(c *testpb.ServerConfig) {
			c.PayloadConfig = &testpb.PayloadConfig{Payload: &testpb.PayloadConfig_BytebufParams{BytebufParams: &testpb.ByteBufferParams{}}}
		},
		"server_config.core_list":           func(c *testpb.ServerConfig) { c.CoreList = []int32{1000} },
		"server_config.core_limit":          func(c *testpb.ServerConfig) { c.CoreLimit = 1000 },
		"server_config.resource_quota_size": func(c *testpb.ServerConfig) { c.ResourceQuotaSize = 1 << 20 },
		"server_config.channel_args": func(c *testpb.ServerConfig) {
			c.ChannelArgs = []*testpb.ChannelArg{{Name: "grpc.max_receive_message_length"}}
		},
		"server_config.server_processes": func(c *testpb.ServerConfig) { c.ServerProcesses = 2 },
		"server_config.other_server_api": func(c *testpb.ServerConfig) { c.OtherServerApi = "grpc.aio" },
	} {
		t.Run(field, func(t *testing.T) {
			config := validServerConfig()
			edit(config)
			stream, err := w.RunServer(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := stream.Send(&testpb.ServerArgs{Argtype: &testpb.ServerArgs_Setup{Setup: config}}); err != nil {
				t.Fatal(err)
			}
			expectInvalid(t, field, func() error { _, err := stream.Recv(); return err })
		})
	}
	for field, edit := range map[string]func(*testpb.ClientConfig){
		"client_config.security_params": func(c *testpb.ClientConfig) { c.SecurityParams = &testpb.SecurityParams{} },
		"client_config.rpc_type":        func(c *testpb.ClientConfig) { c.RpcType = testpb.RpcType_STREAMING_BOTH_WAYS },
		"client_config.load_params":     func(c *testpb.ClientConfig) { c.LoadParams = nil },
		"poisson.offered_load": func(c *testpb.ClientConfig) {
			c.LoadParams = &testpb.LoadParams{Load: &testpb.LoadParams_Poisson{Poisson: &testpb.PoissonParams{}}}
		},
		"client_config.client_channels":              func(c *testpb.ClientConfig) { c.ClientChannels = 0 },
		"client_config.outstanding_rpcs_per_channel": func(c *testpb.ClientConfig) { c.ClientChannels, c.OutstandingRpcsPerChannel = 100, 100 },
		"histogram_params": func(c *testpb.ClientConfig) {
			c.HistogramParams = &testpb.HistogramParams{Resolution: -1, MaxPossible: 10}
		},
		"client_config.server_targets":              func(c *testpb.ClientConfig) { c.ServerTargets = []string{"no port here"} },
		"client_config.use_coalesce_api":            func(c *testpb.ClientConfig) { c.UseCoalesceApi = true },
		"median_latency_collection_interval_millis": func(c *testpb.ClientConfig) { c.MedianLatencyCollectionIntervalMillis = 100 },
		"client_config.client_processes":            func(c *testpb.ClientConfig) { c.ClientProcesses = 2 },
		"client_config.client_type":                 func(c *testpb.ClientConfig) { c.ClientType = testpb.ClientType_OTHER_CLIENT },
		"client_config.core_list":                   func(c *testpb.ClientConfig) { c.CoreList = []int32{1000} },
		"max_possible >= 1": func(c *testpb.ClientConfig) {
			c.HistogramParams = &testpb.HistogramParams{Resolution: 0.01, MaxPossible: 0.5}
		},
		"client_config.payload_config.simple_params.req_size": func(c *testpb.ClientConfig) {
			c.PayloadConfig = &testpb.PayloadConfig{Payload: &testpb.PayloadConfig_SimpleParams{SimpleParams: &testpb.SimpleProtoParams{ReqSize: 5 << 20}}}
		},
		"less than once an hour": func(c *testpb.ClientConfig) {
			c.LoadParams = &testpb.LoadParams{Load: &testpb.LoadParams_Poisson{Poisson: &testpb.PoissonParams{OfferedLoad: 1e-6}}}
		},
	} {
		t.Run(field, func(t *testing.T) {
			config := validClientConfig("127.0.0.1:1")
			edit(config)
			stream, err := w.RunClient(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := stream.Send(&testpb.ClientArgs{Argtype: &testpb.ClientArgs_Setup{Setup: config}}); err != nil {
				t.Fatal(err)
			}
			expectInvalid(t, field, func() error { _, err := stream.Recv(); return err })
		})
	}
	t.Run("mark before setup", func(t *testing.T) {
		stream, err := w.RunServer(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(&testpb.ServerArgs{Argtype: &testpb.ServerArgs_Mark{Mark: &testpb.Mark{}}}); err != nil {
			t.Fatal(err)
		}
		expectInvalid(t, "setup", func() error { _, err := stream.Recv(); return err })
	})
	if cores, err := w.CoreCount(ctx, &testpb.CoreRequest{}); err != nil || cores.Cores < 1 {
		t.Errorf("CoreCount after the refusals: %v, %v", cores, err)
	}
}

// The Lisp worker's RunServer, step by step: the server it starts answers
// every BenchmarkService method as gRPC's benchmark servers do, marks
// report its statistics, core_list binds the worker to those CPUs until
// the stream ends, and the end of the stream stops the server.
func TestLispWorkerRunServer(t *testing.T) {
	proc, addr := startKind(t, "lisp worker", lispKind)
	w := dialWorker(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	before := threadCPUs(t, proc.PID())

	config := validServerConfig()
	pinned := len(before) > 1
	if pinned {
		config.CoreList = []int32{int32(firstCPU(t, before))}
	}
	stream, err := w.RunServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&testpb.ServerArgs{Argtype: &testpb.ServerArgs_Setup{Setup: config}}); err != nil {
		t.Fatal(err)
	}
	st, err := stream.Recv()
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	if pinned {
		if st.Cores != 1 {
			t.Errorf("with core_list %v the server reports %d cores, want 1", config.CoreList, st.Cores)
		}
		for tid, cpus := range threadCPUs(t, proc.PID()) {
			if cpus != strconv.Itoa(int(config.CoreList[0])) {
				t.Errorf("thread %s may run on CPUs %s, want only %d", tid, cpus, config.CoreList[0])
			}
		}
	}
	target := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(st.Port)))
	exerciseBenchmarkService(t, ctx, target)

	// The host's CPU counters advance in clock ticks (10 ms): let a few pass.
	time.Sleep(100 * time.Millisecond)
	if err := stream.Send(&testpb.ServerArgs{Argtype: &testpb.ServerArgs_Mark{Mark: &testpb.Mark{Reset_: true}}}); err != nil {
		t.Fatal(err)
	}
	marked, err := stream.Recv()
	if err != nil {
		t.Fatalf("mark: %v", err)
	}
	if s := marked.Stats; s.TimeElapsed < 0.1 || s.TimeUser+s.TimeSystem <= 0 || s.TotalCpuTime == 0 || s.IdleCpuTime > s.TotalCpuTime {
		t.Errorf("statistics after serving calls: %v; want elapsed, CPU and host times", s)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != io.EOF {
		t.Errorf("after the driver's half-close the stream ended with %v, want OK", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", target, time.Second)
		if err != nil {
			break
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatalf("the benchmark server still accepts connections 10 s after its stream ended")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if after := threadCPUs(t, proc.PID()); pinned {
		for tid, cpus := range after {
			if cpus != before[firstTID(before)] {
				t.Errorf("after the server stopped, thread %s may run on CPUs %s, want the worker's own %s", tid, cpus, before[firstTID(before)])
			}
		}
	}
	if _, err := w.QuitWorker(ctx, &testpb.Void{}); err != nil {
		t.Fatalf("QuitWorker: %v", err)
	}
	for proc.ExitedEarly() == nil {
		if time.Now().After(deadline.Add(10 * time.Second)) {
			t.Fatal("the worker did not exit after QuitWorker")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func exerciseBenchmarkService(t *testing.T, ctx context.Context, target string) {
	t.Helper()
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	b := testgrpc.NewBenchmarkServiceClient(conn)
	req := &testpb.SimpleRequest{ResponseType: testpb.PayloadType_COMPRESSABLE, ResponseSize: 100,
		Payload: &testpb.Payload{Body: make([]byte, 10)}}
	wantBody := func(what string, r *testpb.SimpleResponse, n int) {
		t.Helper()
		if got := len(r.GetPayload().GetBody()); got != n {
			t.Errorf("%s: a payload of %d octets, want %d", what, got, n)
		}
	}
	r, err := b.UnaryCall(ctx, req)
	if err != nil {
		t.Fatalf("UnaryCall: %v", err)
	}
	wantBody("UnaryCall", r, 100)
	if _, err := b.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: -1}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("UnaryCall asking for -1 octets: %v, want INVALID_ARGUMENT", err)
	}
	for _, open := range []struct {
		name string
		f    func() (grpc.BidiStreamingClient[testpb.SimpleRequest, testpb.SimpleResponse], error)
	}{
		{"StreamingCall", func() (grpc.BidiStreamingClient[testpb.SimpleRequest, testpb.SimpleResponse], error) {
			return b.StreamingCall(ctx)
		}},
		{"StreamingBothWays", func() (grpc.BidiStreamingClient[testpb.SimpleRequest, testpb.SimpleResponse], error) {
			return b.StreamingBothWays(ctx)
		}},
	} {
		s, err := open.f()
		if err != nil {
			t.Fatalf("%s: %v", open.name, err)
		}
		for i := 0; i < 3; i++ {
			r := proto.Clone(req).(*testpb.SimpleRequest)
			r.ResponseSize = int32(10 * (i + 1))
			if err := s.Send(r); err != nil {
				t.Fatalf("%s: send: %v", open.name, err)
			}
			resp, err := s.Recv()
			if err != nil {
				t.Fatalf("%s: recv: %v", open.name, err)
			}
			wantBody(open.name, resp, 10*(i+1))
		}
		s.CloseSend()
		if _, err := s.Recv(); err != io.EOF {
			t.Errorf("%s: after the half-close: %v, want the end of the stream", open.name, err)
		}
	}
	cs, err := b.StreamingFromClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := cs.Send(req); err != nil {
			t.Fatal(err)
		}
	}
	r, err = cs.CloseAndRecv()
	if err != nil {
		t.Fatalf("StreamingFromClient: %v", err)
	}
	wantBody("StreamingFromClient", r, 100)
	sctx, scancel := context.WithCancel(ctx)
	ss, err := b.StreamingFromServer(sctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		r, err := ss.Recv()
		if err != nil {
			t.Fatalf("StreamingFromServer: response %d: %v", i, err)
		}
		wantBody("StreamingFromServer", r, 100)
	}
	scancel()
}

// threadCPUs maps each thread of process pid to the CPUs it may run on
// (Cpus_allowed_list of /proc/PID/task/TID/status).
func threadCPUs(t *testing.T, pid int) map[string]string {
	t.Helper()
	dirs, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no threads of %d: %v", pid, err)
	}
	out := map[string]string{}
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(d, "status"))
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				out[filepath.Base(d)] = strings.TrimSpace(v)
			}
		}
	}
	return out
}

// threadsNamed counts the threads of process pid whose name (comm, which
// SBCL sets from a thread's name, cut to 15 bytes) is name. Counting by
// name leaves out the handler threads a worker keeps idle for a while.
func threadsNamed(t *testing.T, pid int, name string) int {
	t.Helper()
	dirs, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no threads of %d: %v", pid, err)
	}
	n := 0
	for _, d := range dirs {
		comm, err := os.ReadFile(filepath.Join(d, "comm"))
		if err == nil && strings.TrimSpace(string(comm)) == name {
			n++
		}
	}
	return n
}

func firstTID(m map[string]string) string {
	for tid := range m {
		return tid
	}
	return ""
}

// firstCPU is the first CPU of a thread's allowed list ("0-1" gives 0).
func firstCPU(t *testing.T, m map[string]string) int {
	t.Helper()
	list := m[firstTID(m)]
	n, err := strconv.Atoi(strings.FieldsFunc(list, func(r rune) bool { return r == '-' || r == ',' })[0])
	if err != nil {
		t.Fatalf("CPU list %q: %v", list, err)
	}
	return n
}

// A driver that goes away in the middle of a run (killed, or its host
// lost) leaves no benchmark running: the Lisp workers stop their server
// and their client's calls when their streams end, and serve the next
// driver.
func TestLispWorkersOutliveTheirDriver(t *testing.T) {
	if *driver == "" {
		t.Skip("-driver is not set; run under `tools/bazel test //go/qps:qps_test`")
	}
	_, serverAddr := startKind(t, "lisp server worker", lispKind)
	client, clientAddr := startKind(t, "lisp client worker", lispKind)
	// The client worker runs each outstanding call on a thread of this name.
	const callThread = "qps client call"
	calls := func() int { return threadsNamed(t, client.PID(), callThread) }

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, runfile.Path(*driver), "--scenarios_json="+scenario("abandoned", "STREAMING", 4, 8, 0, 30))
	cmd.Env = append(os.Environ(), "QPS_WORKERS="+serverAddr+","+clientAddr)
	cmd.Stderr = serverproc.TestLog(t, "driver")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the client's 32 calls run, then kill the driver.
	deadline := time.Now().Add(30 * time.Second)
	for calls() < 32 {
		if time.Now().After(deadline) {
			t.Fatalf("the client worker never started its calls (%d call threads)", calls())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()

	for n := calls(); n > 0; n = calls() {
		if time.Now().After(deadline.Add(15 * time.Second)) {
			t.Fatalf("the client worker still runs %d calls long after its driver died", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	run := runDriver(t, time.Minute, []string{serverAddr, clientAddr}, "--scenarios_json="+scenario("next", "UNARY", 1, 1, 0, 1))
	checkResult(t, run, serverAddr, 1)
}
