package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/cpuset"
	"github.com/grpcbench/grpcbench/go/bench/harness"
)

// lispClient is the Lisp load generator (-lisp_client), a child process
// that makes the calls of every cell with clgrpc's client while this
// program does everything else: it starts and pins the process, measures
// the server around each repetition, and computes and writes the results
// from the raw readings the child reports. They speak JSON lines over the
// child's stdin and stdout (lisp/routeguide/src/loadgen-agent.lisp): one
// command, one reply.
//
// A pipe rather than gRPC's WorkerService, whose client configuration
// describes BenchmarkService calls and cannot say "RecordRoute with ten
// points": the child needs no port, answers only its parent, and ends when
// its input does, and the kernel kills it if this program dies first.
type lispClient struct {
	path string
	cmd  *exec.Cmd
	in   io.WriteCloser

	replies chan []byte   // one per line of the child's stdout; closed at its end
	readErr error         // why the replies ended early, once replies is closed
	exited  chan struct{} // closed once the child has been waited for
	waitErr error

	mu       sync.Mutex // one exchange at a time
	broken   error      // set once an exchange failed midway: the child is no longer in step
	nextCell int
}

// How long the child may take to answer its first command (SBCL maps, and
// may decompress, a core of tens of megabytes, under qemu for arm64), to
// close a cell's connections, and to close them all and exit once its input
// ends. lispClientMargin is what a repetition's commands may take beyond
// the budget the child is given for its calls: a full collection, creating
// and joining a thread per client, the readings between measure and start,
// and replies through a pipe.
const (
	lispClientReadyTimeout = 30 * time.Second
	lispClientStopGrace    = 10 * time.Second
	lispClientMargin       = 5 * time.Second
)

// errLispClientBroken marks the errors of commands that could not be sent
// because an earlier exchange failed and the child was killed.
var errLispClientBroken = errors.New("not run: the Lisp client failed earlier")

// maxReplyBytes bounds a reply line: a repetition's latencies are a few
// thousand buckets of a dozen bytes each.
const maxReplyBytes = 16 << 20

// startLispClient starts the Lisp load generator at path on cpus (if not
// empty), its stderr to log, and asks for its SBCL version, which also
// proves that it answers.
func startLispClient(ctx context.Context, path string, cpus cpuset.Set, log io.Writer) (*lispClient, string, error) {
	return startLispClientWithin(ctx, path, cpus, log, lispClientReadyTimeout)
}

func startLispClientWithin(ctx context.Context, path string, cpus cpuset.Set, log io.Writer, ready time.Duration) (*lispClient, string, error) {
	cmd := exec.Command(path)
	cmd.Stderr = log
	cmd.WaitDelay = time.Second
	// If this program is killed (a Bazel timeout), so is the child, which
	// would otherwise go on calling until its command ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, "", err
	}
	// An explicit pipe: Wait would close cmd.StdoutPipe's as soon as the
	// child exits, possibly before its last reply has been read.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, "", err
	}
	cmd.Stdout = outW
	if len(cpus) > 0 {
		err = cpuset.WithThreadAffinity(cpus, cmd.Start)
	} else {
		err = cmd.Start()
	}
	outW.Close()
	if err != nil {
		outR.Close()
		return nil, "", fmt.Errorf("starting the Lisp client %s: %w", path, err)
	}
	lc := &lispClient{path: path, cmd: cmd, in: in, replies: make(chan []byte, 1), exited: make(chan struct{})}
	go func() {
		lc.waitErr = cmd.Wait()
		close(lc.exited)
	}()
	go lc.readReplies(outR)

	var hello struct {
		SBCLVersion string `json:"sbcl_version"`
	}
	readyCtx, cancel := context.WithTimeout(ctx, ready)
	defer cancel()
	if err := lc.exchange(readyCtx, map[string]any{"command": "version"}, &hello); err != nil {
		lc.stop()
		return nil, "", fmt.Errorf("the Lisp client %s: %w", path, err)
	}
	return lc, hello.SBCLVersion, nil
}

func (lc *lispClient) readReplies(r *os.File) {
	defer r.Close()
	defer close(lc.replies)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxReplyBytes)
	for sc.Scan() {
		lc.replies <- append([]byte(nil), sc.Bytes()...)
	}
	lc.readErr = sc.Err() // published by the close
}

// exchange sends one command and decodes its reply into reply (nil: none
// wanted). A reply {"error": why} becomes an error. If ctx ends first, the
// child is killed: it cannot be interrupted midway, and nothing it says
// after that could be matched to a command.
func (lc *lispClient) exchange(ctx context.Context, command map[string]any, reply any) error {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.broken != nil {
		return lc.broken
	}
	fail := func(err error) error {
		lc.broken = fmt.Errorf("%w: %v", errLispClientBroken, err)
		lc.kill()
		return err
	}
	line, err := json.Marshal(command)
	if err != nil {
		return err
	}
	if _, err := lc.in.Write(append(line, '\n')); err != nil {
		return fail(lc.gone(fmt.Errorf("sending %s: %w", command["command"], err)))
	}
	var got []byte
	select {
	case r, ok := <-lc.replies:
		if !ok {
			if lc.readErr != nil {
				return fail(fmt.Errorf("reading the reply to %s: %w", command["command"], lc.readErr))
			}
			return fail(lc.gone(fmt.Errorf("no reply to %s", command["command"])))
		}
		got = r
	case <-ctx.Done():
		return fail(fmt.Errorf("waiting for the reply to %s: %w", command["command"], ctx.Err()))
	}
	var status struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(got, &status); err != nil {
		return fail(fmt.Errorf("reply to %s is not JSON: %w: %.200q", command["command"], err, got))
	}
	if !status.OK {
		if status.Error == "" {
			return fail(fmt.Errorf("reply to %s has neither ok nor error: %.200q", command["command"], got))
		}
		return errors.New(status.Error)
	}
	if reply != nil {
		if err := json.Unmarshal(got, reply); err != nil {
			return fail(fmt.Errorf("reply to %s: %w", command["command"], err))
		}
	}
	return nil
}

// gone adds how the child ended to err, when it has.
func (lc *lispClient) gone(err error) error {
	select {
	case <-lc.exited:
		return fmt.Errorf("%w (the Lisp client exited: %v)", err, exitDescription(lc.waitErr))
	case <-time.After(time.Second):
		return err
	}
}

func exitDescription(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

func (lc *lispClient) kill() {
	lc.cmd.Process.Kill()
}

// stop ends the child's input, so that it closes its connections and
// exits, and kills it if it has not within lispClientStopGrace.
func (lc *lispClient) stop() error {
	lc.in.Close()
	select {
	case <-lc.exited:
		return nil
	case <-time.After(lispClientStopGrace):
		lc.kill()
		<-lc.exited
		return fmt.Errorf("the Lisp client did not exit within %v of the end of its input; killed it", lispClientStopGrace)
	}
}

// lispCell is one cell's clients in the Lisp client: a harness.External.
type lispCell struct {
	lc      *lispClient
	id      int
	sendLag harness.LogBuckets // of the repetition whose latencies were read last
}

// open connects a cell's clients, each call bounded by callTimeout.
func (lc *lispClient) open(ctx context.Context, addr string, s scenario, mode connMode, streamMsgs int, callTimeout time.Duration) (*lispCell, error) {
	host, port, err := splitAddr(addr)
	if err != nil {
		return nil, err
	}
	lc.mu.Lock()
	lc.nextCell++
	id := lc.nextCell
	lc.mu.Unlock()
	// The child gives the connections connectTimeout, as dial does.
	ctx, cancel := context.WithTimeout(ctx, connectTimeout+lispClientMargin)
	defer cancel()
	err = lc.exchange(ctx, map[string]any{
		"command": "open", "cell": id, "host": host, "port": port, "rpc": string(s.kind),
		"clients": s.clients, "conns": string(mode), "stream_msgs": streamMsgs,
		"call_timeout_ms": callTimeout.Milliseconds(),
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("the Lisp client: %w", err)
	}
	return &lispCell{lc: lc, id: id}, nil
}

func splitAddr(addr string) (string, int, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return "", 0, fmt.Errorf("port of %s: %w", addr, err)
	}
	return host, port, nil
}

// close closes the cell's connections. Nothing is said when the child is
// gone already: the cell's failure has said why.
func (c *lispCell) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), lispClientStopGrace)
	defer cancel()
	err := c.lc.exchange(ctx, map[string]any{"command": "close", "cell": c.id}, nil)
	if errors.Is(err, errLispClientBroken) {
		return nil
	}
	return err
}

// withBudget adds to cmd the time the child has for it: what ctx leaves,
// less the margin its reply needs. The child then starts no call after it,
// and cuts the calls in flight short at it, so that a server that never
// answers fails the scenario without the child having to be killed.
func withBudget(ctx context.Context, cmd map[string]any) map[string]any {
	if deadline, ok := ctx.Deadline(); ok {
		cmd["budget_ns"] = max(time.Until(deadline)-lispClientMargin, time.Millisecond).Nanoseconds()
	}
	return cmd
}

// errCutShort is the error of a command whose calls ran into its budget.
var errCutShort = errors.New("the Lisp client's calls ran into the scenario's time budget; an RPC is probably stuck")

func (c *lispCell) WarmUp(ctx context.Context, w harness.Warmup) error {
	cmd := map[string]any{"command": "warm_up", "cell": c.id}
	if w.Ops > 0 {
		cmd["ops"] = w.Ops
	} else {
		// As the harness bounds its own timed warm-up.
		cmd["duration_ns"], cmd["max_ops"] = w.Duration.Nanoseconds(), harness.DefaultMaxOps
	}
	var r struct {
		CutShort bool `json:"cut_short"`
	}
	if err := c.lc.exchange(ctx, withBudget(ctx, cmd), &r); err != nil {
		return err
	}
	if r.CutShort {
		return errCutShort
	}
	return nil
}

func (c *lispCell) Prepare(ctx context.Context, p harness.Plan) error {
	maxOps := p.MaxOps
	if maxOps <= 0 {
		maxOps = harness.DefaultMaxOps
	}
	cmd := map[string]any{"command": "measure", "cell": c.id, "duration_ns": p.Duration.Nanoseconds(), "max_ops": maxOps}
	if p.Rate > 0 {
		cmd["rate"] = p.Rate
	}
	return c.lc.exchange(ctx, withBudget(ctx, cmd), nil)
}

// startReply is a start command's reply.
type startReply struct {
	WallNs      int64  `json:"wall_ns"`
	Ops         int64  `json:"ops"`
	Errors      int64  `json:"errors"`
	Msgs        int64  `json:"msgs"`
	FirstError  string `json:"first_error"`
	CutShort    bool   `json:"cut_short"`
	CPUUserNs   int64  `json:"cpu_user_ns"`
	CPUSystemNs int64  `json:"cpu_system_ns"`
	AllocBytes  uint64 `json:"alloc_bytes"`
}

func (c *lispCell) Start(ctx context.Context) (harness.ExternalRep, error) {
	var r startReply
	if err := c.lc.exchange(ctx, map[string]any{"command": "start", "cell": c.id}, &r); err != nil {
		return harness.ExternalRep{}, err
	}
	if r.CutShort {
		return harness.ExternalRep{}, fmt.Errorf("%w (%d calls succeeded, %d failed, the first with: %s)",
			errCutShort, r.Ops, r.Errors, r.FirstError)
	}
	return harness.ExternalRep{
		Wall: time.Duration(r.WallNs),
		CPU:  harness.CPUTimes{User: time.Duration(r.CPUUserNs), System: time.Duration(r.CPUSystemNs)},
		Ops:  r.Ops, Errors: r.Errors, Msgs: r.Msgs, FirstError: r.FirstError,
		AllocBytes: r.AllocBytes,
	}, nil
}

// logBucketsReply is a histogram as the Lisp client writes one.
type logBucketsReply struct {
	Resolution float64    `json:"resolution"`
	Buckets    [][2]int64 `json:"buckets"`
}

func (h logBucketsReply) buckets() harness.LogBuckets {
	counts := make(map[int]int64, len(h.Buckets))
	for _, b := range h.Buckets {
		counts[int(b[0])] += b[1]
	}
	return harness.LogBuckets{Resolution: h.Resolution, Counts: counts}
}

// Latencies asks for the last repetition's latencies, and keeps its send
// lag, which comes in the same reply, for SendLag.
func (c *lispCell) Latencies(ctx context.Context) (harness.LogBuckets, error) {
	var r struct {
		Latency logBucketsReply `json:"latency"`
		SendLag logBucketsReply `json:"send_lag"`
	}
	c.sendLag = harness.LogBuckets{}
	if err := c.lc.exchange(ctx, map[string]any{"command": "latencies", "cell": c.id}, &r); err != nil {
		return harness.LogBuckets{}, err
	}
	c.sendLag = r.SendLag.buckets()
	return r.Latency.buckets(), nil
}

// SendLag is how late the last repetition's calls started after they were
// due, in an open loop (harness.ExternalSendLag); read with its latencies.
func (c *lispCell) SendLag() harness.LogBuckets { return c.sendLag }
