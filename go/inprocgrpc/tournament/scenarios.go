package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	pb "github.com/grpcbench/grpcbench/proto/echo"
)

// A workload is one row group of the prior tournament's tables
// (docs/prior-results.md): what each operation does and how many
// goroutines do it.
type workload struct {
	name       string // the "workload" parameter
	payload    int    // bytes per message
	goroutines int    // 0: one caller, not reported as a parameter
	messages   int    // per operation, for streams
	latency    bool   // a fixed call count per goroutine, for percentiles
	op         func(cli pb.EchoClient, w *workload) opFactory
}

// opFactory makes a scenario's operation, and releases what it holds
// (streams) after the run.
type opFactory struct {
	op    harness.Op
	close func()
}

// The payload sizes of the prior tournament's large-message table.
var largePayloads = []int{64, 1 << 10, 10 << 10, 100 << 10, 1 << 20}

// workloads are the prior tournament's scenarios, in its order.
func workloads() []*workload {
	ws := []*workload{{name: "unary", payload: 32, op: unaryOp}}
	for _, p := range largePayloads {
		ws = append(ws, &workload{name: "unary", payload: p, op: unaryOp})
	}
	ws = append(ws,
		&workload{name: "server_stream", payload: 32, messages: 100, op: serverStreamOp},
		&workload{name: "bidi", payload: 32, op: bidiOp},
	)
	for _, g := range []int{10, 50, 100} {
		ws = append(ws, &workload{name: "unary_concurrent", payload: 32, goroutines: g, op: unaryOp})
	}
	return append(ws, &workload{name: "latency", payload: 32, goroutines: 10, latency: true, op: unaryOp})
}

// scenario names a workload run by a competitor, e.g.
// "unary/payload=1024/ours" or "unary_concurrent/goroutines=10/grpchan".
func (w *workload) scenario(competitor string) string {
	name := w.name
	switch {
	case w.name == "unary":
		name += fmt.Sprintf("/payload=%d", w.payload)
	case w.goroutines > 0 && !w.latency:
		name += fmt.Sprintf("/goroutines=%d", w.goroutines)
	}
	return name + "/" + competitor
}

// params are the scenario's parameters: the tournament layout groups by
// workload, payload and goroutines and labels rows by competitor.
func (w *workload) params(competitor string) map[string]any {
	p := map[string]any{"workload": w.name, "competitor": competitor, "payload": w.payload}
	if w.goroutines > 0 {
		p["goroutines"] = w.goroutines
	}
	if w.messages > 0 {
		p["messages"] = w.messages
	}
	return p
}

func (w *workload) workers() int { return max(w.goroutines, 1) }

// unaryOp: one Echo call. Each worker has its own request, as concurrent
// callers would.
func unaryOp(cli pb.EchoClient, w *workload) opFactory {
	reqs := make([]*pb.EchoRequest, w.workers())
	for i := range reqs {
		reqs[i] = &pb.EchoRequest{Payload: make([]byte, w.payload)}
	}
	return opFactory{op: func(ctx context.Context, worker int) (int, error) {
		resp, err := cli.Echo(ctx, reqs[worker])
		if err == nil && len(resp.GetPayload()) != w.payload {
			err = fmt.Errorf("echoed %d bytes, sent %d", len(resp.GetPayload()), w.payload)
		}
		return 1, err
	}}
}

// serverStreamOp: one whole ServerStream call of w.messages responses.
func serverStreamOp(cli pb.EchoClient, w *workload) opFactory {
	req := &pb.StreamRequest{Count: int32(w.messages), PayloadSize: int32(w.payload)}
	return opFactory{op: func(ctx context.Context, _ int) (int, error) {
		st, err := cli.ServerStream(ctx, req)
		if err != nil {
			return 0, err
		}
		n := 0
		for {
			_, err := st.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return n, err
			}
			n++
		}
		if n != w.messages {
			return n, fmt.Errorf("received %d messages, want %d", n, w.messages)
		}
		return n, nil
	}}
}

// bidiOp: one request and its echo on a Bidi stream that each worker opens
// once (in the warm-up, if there is one) and keeps for the whole run.
func bidiOp(cli pb.EchoClient, w *workload) opFactory {
	type worker struct {
		stream pb.Echo_BidiClient
		cancel context.CancelFunc
		req    *pb.EchoRequest
	}
	workers := make([]worker, w.workers())
	var mu sync.Mutex // guards workers against close; ops of one worker are sequential
	op := func(ctx context.Context, i int) (int, error) {
		wk := &workers[i]
		if wk.stream == nil {
			sctx, cancel := context.WithCancel(context.Background())
			st, err := cli.Bidi(sctx)
			if err != nil {
				cancel()
				return 0, err
			}
			mu.Lock()
			wk.stream, wk.cancel = st, cancel
			wk.req = &pb.EchoRequest{Payload: make([]byte, w.payload)}
			mu.Unlock()
		}
		if err := wk.stream.Send(wk.req); err != nil {
			return 0, err
		}
		resp, err := wk.stream.Recv()
		if err == nil && len(resp.GetPayload()) != w.payload {
			err = fmt.Errorf("echoed %d bytes, sent %d", len(resp.GetPayload()), w.payload)
		}
		return 1, err
	}
	closeAll := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, wk := range workers {
			if wk.stream == nil {
				continue
			}
			wk.stream.CloseSend()
			wk.stream.Recv() // the end of the stream
			wk.cancel()
		}
	}
	return opFactory{op: op, close: closeAll}
}
