// Package driver runs gRPC benchmark scenarios against qps workers, as gRPC's
// qps_json_driver does: it tells the first workers to run benchmark servers
// and the rest to run clients, marks the start and end of the measurement,
// collects every worker's statistics and computes a ScenarioResult. Any
// worker that speaks grpc.testing.WorkerService will do: grpc-go's, gRPC
// C++'s or Java's, or clgrpc's.
package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Options tune a run beyond what the scenario says.
type Options struct {
	// Workers are the workers' driver addresses (HOST:PORT), servers
	// first, as gRPC's QPS_WORKERS lists them.
	Workers []string
	// SetupTimeout bounds each step outside the measured time: reaching
	// the workers and starting their servers and clients, each mark, and
	// collecting the final statistics. A worker that does not answer
	// within it fails the run instead of hanging it.
	SetupTimeout time.Duration
	// Logf receives progress lines (nil: none).
	Logf func(format string, args ...any)
	// OnMeasure, if set, is called as the measured interval begins (true),
	// just before the marks that begin it go out, and as it ends (false),
	// just before the final marks: for readings of counters the workers do
	// not report, such as their control groups', over the same interval.
	OnMeasure func(begins bool)
}

func (o Options) onMeasure(begins bool) {
	if o.OnMeasure != nil {
		o.OnMeasure(begins)
	}
}

func (o Options) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// worker is one worker's connection and its RunServer or RunClient stream.
type worker struct {
	addr   string
	conn   *grpc.ClientConn
	server testgrpc.WorkerService_RunServerClient
	client testgrpc.WorkerService_RunClientClient
}

// Run runs one scenario and returns its result with the summary computed.
// Cancelling ctx, or any failure, ends every worker's stream, which makes
// the workers stop their servers and clients.
func Run(ctx context.Context, sc *testpb.Scenario, opts Options) (*testpb.ScenarioResult, error) {
	if err := checkScenario(sc); err != nil {
		return nil, err
	}
	numServers := int(sc.NumServers)
	numClients := int(sc.NumClients)
	if numClients <= 0 {
		// As gRPC's driver does: every worker that is not a server is a client.
		numClients = len(opts.Workers) - numServers
	}
	if numClients < 1 || len(opts.Workers) < numServers+numClients {
		return nil, fmt.Errorf("scenario %q needs %d server and %d client workers; %d are named (%v)",
			sc.Name, numServers, max(numClients, 1), len(opts.Workers), opts.Workers)
	}
	latencies, err := NewHistogram(sc.GetClientConfig().GetHistogramParams())
	if err != nil {
		return nil, err
	}
	if opts.SetupTimeout <= 0 {
		opts.SetupTimeout = time.Minute
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	servers, clients := make([]*worker, numServers), make([]*worker, numClients)
	for i, addr := range opts.Workers[:numServers+numClients] {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return nil, fmt.Errorf("worker %s: %w", addr, err)
		}
		defer conn.Close()
		w := &worker{addr: addr, conn: conn}
		if i < numServers {
			servers[i] = w
		} else {
			clients[i-numServers] = w
		}
	}
	// Every worker must be reachable before anything starts: a stream
	// opened to a worker that never answers would wait for it for ever.
	for _, w := range append(append([]*worker{}, servers...), clients...) {
		if err := awaitReady(ctx, w, opts.SetupTimeout); err != nil {
			return nil, err
		}
	}

	clientConfig := proto.Clone(sc.ClientConfig).(*testpb.ClientConfig)
	for i, s := range servers {
		opts.logf("starting server %d on worker %s", i, s.addr)
		st, err := startServer(ctx, s, sc.ServerConfig, opts.SetupTimeout)
		if err != nil {
			return nil, err
		}
		host, _, err := net.SplitHostPort(s.addr)
		if err != nil {
			return nil, fmt.Errorf("worker %s: %w", s.addr, err)
		}
		clientConfig.ServerTargets = append(clientConfig.ServerTargets, net.JoinHostPort(host, strconv.Itoa(int(st.Port))))
	}

	// The scenario's channels are shared out among the clients, so that the
	// total is what it says however many clients there are.
	channelsLeft := int(clientConfig.ClientChannels)
	for i, c := range clients {
		perClient := proto.Clone(clientConfig).(*testpb.ClientConfig)
		n := channelsLeft / (numClients - i)
		channelsLeft -= n
		perClient.ClientChannels = int32(n)
		opts.logf("starting client %d on worker %s with %d channels to %v", i, c.addr, n, perClient.ServerTargets)
		if err := startClient(ctx, c, perClient, opts.SetupTimeout); err != nil {
			return nil, err
		}
	}

	// A first mark tells the clients that everything is up; then the
	// warm-up, whose statistics the next mark (with reset) discards.
	if _, err := markClients(ctx, clients, opts.SetupTimeout); err != nil {
		return nil, err
	}
	opts.logf("warming up for %d s", sc.WarmupSeconds)
	begin := time.Now()
	if err := sleepUntil(ctx, begin.Add(time.Duration(sc.WarmupSeconds)*time.Second)); err != nil {
		return nil, err
	}
	opts.logf("measuring for %d s", sc.BenchmarkSeconds)
	start := time.Now()
	opts.onMeasure(true)
	// Every mark goes out before any answer is read, so that the workers'
	// intervals start as nearly together as they can.
	if err := sendServerMarks(servers); err != nil {
		return nil, err
	}
	if err := sendClientMarks(clients); err != nil {
		return nil, err
	}
	if _, err := readServerStats(ctx, servers, opts.SetupTimeout); err != nil {
		return nil, err
	}
	if _, err := readClientStats(ctx, clients, opts.SetupTimeout); err != nil {
		return nil, err
	}
	if err := sleepUntil(ctx, begin.Add(time.Duration(sc.WarmupSeconds+sc.BenchmarkSeconds)*time.Second)); err != nil {
		return nil, err
	}
	end := time.Now()

	// The final marks go out to clients and servers together, so that both
	// sides' intervals end at the same moment; only then does anything
	// stop. Whichever side leads the calls stops first, so that the other
	// is not left waiting for a message that will never come: the servers
	// of a server-streaming scenario (their streams are half-closed with
	// the mark, as gRPC's driver does), the clients of every other.
	result := &testpb.ScenarioResult{Scenario: proto.Clone(sc).(*testpb.Scenario)}
	result.Scenario.ClientConfig = clientConfig
	serversFirst := clientConfig.RpcType == testpb.RpcType_STREAMING_FROM_SERVER
	opts.onMeasure(false)
	if err := sendClientMarks(clients); err != nil {
		return nil, err
	}
	if err := sendServerMarks(servers); err != nil {
		return nil, err
	}
	if serversFirst {
		for _, s := range servers {
			if err := s.server.CloseSend(); err != nil {
				return nil, fmt.Errorf("server worker %s: closing its stream: %w", s.addr, err)
			}
		}
	}
	clientStats, err := readClientStats(ctx, clients, opts.SetupTimeout)
	if err != nil {
		return nil, err
	}
	serverStats, err := readServerStats(ctx, servers, opts.SetupTimeout)
	if err != nil {
		return nil, err
	}
	statuses := map[int32]int64{}
	for i, st := range clientStats {
		if err := latencies.Merge(st.GetStats().GetLatencies()); err != nil {
			return nil, fmt.Errorf("client worker %s: %w", clients[i].addr, err)
		}
		for _, rr := range st.GetStats().GetRequestResults() {
			statuses[rr.StatusCode] += rr.Count
		}
		result.ClientStats = append(result.ClientStats, st.GetStats())
	}
	for _, st := range serverStats {
		result.ServerStats = append(result.ServerStats, st.GetStats())
		result.ServerCores = append(result.ServerCores, st.Cores)
	}
	for _, c := range clients {
		ok, err := closeStream(ctx, c.addr, c.client, opts.SetupTimeout)
		result.ClientSuccess = append(result.ClientSuccess, ok)
		if err != nil {
			return nil, err
		}
	}
	for _, s := range servers {
		ok, err := closeStream(ctx, s.addr, s.server, opts.SetupTimeout)
		result.ServerSuccess = append(result.ServerSuccess, ok)
		if err != nil {
			return nil, err
		}
	}

	result.Latencies = latencies.Data()
	codesSeen := make([]int32, 0, len(statuses))
	for code := range statuses {
		codesSeen = append(codesSeen, code)
	}
	sort.Slice(codesSeen, func(i, j int) bool { return codesSeen[i] < codesSeen[j] })
	for _, code := range codesSeen {
		result.RequestResults = append(result.RequestResults, &testpb.RequestResultCount{StatusCode: code, Count: statuses[code]})
	}
	result.Summary = &testpb.ScenarioResultSummary{StartTime: timestamppb.New(start), EndTime: timestamppb.New(end)}
	Summarize(result, latencies)
	return result, nil
}

// checkScenario refuses what this driver cannot honour, by name, instead
// of running something other than what the scenario says.
func checkScenario(sc *testpb.Scenario) error {
	switch {
	case sc.ClientConfig == nil || sc.ServerConfig == nil:
		return fmt.Errorf("scenario %q: client_config and server_config are required", sc.Name)
	case sc.NumServers != 1:
		// gRPC's driver takes several, but every client then loads all of
		// them and the qps per server core mixes them; one is what every
		// standard scenario uses.
		return fmt.Errorf("scenario %q: num_servers is %d; this driver runs exactly one server", sc.Name, sc.NumServers)
	case sc.SpawnLocalWorkerCount != 0:
		return fmt.Errorf("scenario %q: spawn_local_worker_count is %d; this driver spawns no workers: start them and name them in QPS_WORKERS",
			sc.Name, sc.SpawnLocalWorkerCount)
	case sc.WarmupSeconds < 0 || sc.BenchmarkSeconds <= 0:
		return fmt.Errorf("scenario %q: warmup_seconds %d and benchmark_seconds %d: need warmup >= 0 and benchmark > 0",
			sc.Name, sc.WarmupSeconds, sc.BenchmarkSeconds)
	case sc.ClientConfig.ClientChannels <= 0:
		return fmt.Errorf("scenario %q: client_channels is %d; need at least 1", sc.Name, sc.ClientConfig.ClientChannels)
	case len(sc.ClientConfig.ServerTargets) > 0:
		return fmt.Errorf("scenario %q: client_config.server_targets is set; the driver fills it in from the server workers", sc.Name)
	}
	return nil
}

// awaitReady waits until the connection to w is ready, for at most timeout.
func awaitReady(ctx context.Context, w *worker, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	w.conn.Connect()
	for {
		state := w.conn.GetState()
		if state == connectivity.Ready {
			return nil
		}
		if !w.conn.WaitForStateChange(ctx, state) {
			return fmt.Errorf("worker %s: not reachable within %v (connection %s)", w.addr, timeout, state)
		}
	}
}

func startServer(ctx context.Context, w *worker, config *testpb.ServerConfig, timeout time.Duration) (*testpb.ServerStatus, error) {
	stream, err := testgrpc.NewWorkerServiceClient(w.conn).RunServer(ctx, grpc.WaitForReady(true))
	if err != nil {
		return nil, fmt.Errorf("server worker %s: RunServer: %w", w.addr, err)
	}
	w.server = stream
	st, err := exchange(ctx, timeout, func() (*testpb.ServerStatus, error) {
		if err := stream.Send(&testpb.ServerArgs{Argtype: &testpb.ServerArgs_Setup{Setup: config}}); err != nil {
			return nil, err
		}
		return stream.Recv()
	})
	if err != nil {
		return nil, fmt.Errorf("server worker %s: starting its server: %w", w.addr, err)
	}
	if st.Port <= 0 || st.Port > 65535 {
		return nil, fmt.Errorf("server worker %s: its server reported port %d", w.addr, st.Port)
	}
	return st, nil
}

func startClient(ctx context.Context, w *worker, config *testpb.ClientConfig, timeout time.Duration) error {
	stream, err := testgrpc.NewWorkerServiceClient(w.conn).RunClient(ctx, grpc.WaitForReady(true))
	if err != nil {
		return fmt.Errorf("client worker %s: RunClient: %w", w.addr, err)
	}
	w.client = stream
	_, err = exchange(ctx, timeout, func() (*testpb.ClientStatus, error) {
		if err := stream.Send(&testpb.ClientArgs{Argtype: &testpb.ClientArgs_Setup{Setup: config}}); err != nil {
			return nil, err
		}
		return stream.Recv()
	})
	if err != nil {
		return fmt.Errorf("client worker %s: starting its client: %w", w.addr, err)
	}
	return nil
}

// markClients marks every client (a new interval, with reset) and reads
// the statistics of the interval that ended.
func markClients(ctx context.Context, ws []*worker, timeout time.Duration) ([]*testpb.ClientStatus, error) {
	if err := sendClientMarks(ws); err != nil {
		return nil, err
	}
	return readClientStats(ctx, ws, timeout)
}

var (
	serverMark = &testpb.ServerArgs{Argtype: &testpb.ServerArgs_Mark{Mark: &testpb.Mark{Reset_: true}}}
	clientMark = &testpb.ClientArgs{Argtype: &testpb.ClientArgs_Mark{Mark: &testpb.Mark{Reset_: true}}}
)

func sendServerMarks(ws []*worker) error {
	for _, w := range ws {
		if err := w.server.Send(serverMark); err != nil {
			return fmt.Errorf("server worker %s: sending a mark: %w", w.addr, streamError(w.server, err))
		}
	}
	return nil
}

func sendClientMarks(ws []*worker) error {
	for _, w := range ws {
		if err := w.client.Send(clientMark); err != nil {
			return fmt.Errorf("client worker %s: sending a mark: %w", w.addr, streamError(w.client, err))
		}
	}
	return nil
}

func readServerStats(ctx context.Context, ws []*worker, timeout time.Duration) ([]*testpb.ServerStatus, error) {
	out := make([]*testpb.ServerStatus, len(ws))
	for i, w := range ws {
		st, err := exchange(ctx, timeout, w.server.Recv)
		if err != nil {
			return nil, fmt.Errorf("server worker %s: reading its statistics: %w", w.addr, err)
		}
		out[i] = st
	}
	return out, nil
}

func readClientStats(ctx context.Context, ws []*worker, timeout time.Duration) ([]*testpb.ClientStatus, error) {
	out := make([]*testpb.ClientStatus, len(ws))
	for i, w := range ws {
		st, err := exchange(ctx, timeout, w.client.Recv)
		if err != nil {
			return nil, fmt.Errorf("client worker %s: reading its statistics: %w", w.addr, err)
		}
		out[i] = st
	}
	return out, nil
}

// closeStream half-closes a worker's stream and waits for the worker to end
// it. The final statistics must have been its last message. OK and
// CANCELLED both count as success, as in gRPC's driver: servers and
// clients shut down at about the same time, and either may see the other
// go first.
func closeStream[T any](ctx context.Context, addr string, stream interface {
	CloseSend() error
	Recv() (T, error)
}, timeout time.Duration) (bool, error) {
	if err := stream.CloseSend(); err != nil {
		return false, fmt.Errorf("worker %s: closing its stream: %w", addr, err)
	}
	_, err := exchange(ctx, timeout, stream.Recv)
	switch {
	case err == nil:
		return false, fmt.Errorf("worker %s: sent a message after its final statistics", addr)
	case errors.Is(err, io.EOF), status.Code(err) == codes.Canceled:
		return true, nil
	default:
		return false, fmt.Errorf("worker %s: ended with %w", addr, err)
	}
}

// streamError is the stream's status when a Send failed because the stream
// had already ended (Send then reports only io.EOF).
func streamError[T any](stream interface{ Recv() (T, error) }, err error) error {
	if errors.Is(err, io.EOF) {
		if _, rerr := stream.Recv(); rerr != nil {
			return rerr
		}
	}
	return err
}

// exchange runs f, which blocks on a stream, for at most timeout. On
// timeout it returns an error and leaves f blocked; the caller's deferred
// cancel ends the stream, which unblocks it.
func exchange[T any](ctx context.Context, timeout time.Duration, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.v, r.err
	case <-timer.C:
		var zero T
		return zero, fmt.Errorf("no answer within %v", timeout)
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

func sleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
