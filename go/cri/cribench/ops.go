package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	cripb "github.com/grpcbench/grpcbench/proto/cri"
)

// lister makes complete container listings and checks each: a listing that
// returns the wrong number of containers is an error, not a fast operation.
type lister struct {
	runtime runtimeapi.RuntimeServiceClient
	chunked cripb.ChunkedRuntimeServiceClient
	want    int           // containers every listing must return
	timeout time.Duration // per listing
}

func newLister(conn grpc.ClientConnInterface, want int, timeout time.Duration) *lister {
	return &lister{
		runtime: runtimeapi.NewRuntimeServiceClient(conn),
		chunked: cripb.NewChunkedRuntimeServiceClient(conn),
		want:    want,
		timeout: timeout,
	}
}

// op returns the benchmark operation of s: one listing, returning how many
// messages carried it.
func (l *lister) op(s scenario) harness.Op {
	var list func(context.Context) (int, int, error) // containers, messages
	switch s.method {
	case methodList:
		list = l.list
	case methodStream:
		list = l.stream
	case methodChunked:
		per := s.perChunk
		list = func(ctx context.Context) (int, int, error) { return l.listChunked(ctx, per) }
	default:
		panic("unknown method " + s.method)
	}
	return func(ctx context.Context, _ int) (int, error) {
		ctx, cancel := context.WithTimeout(ctx, l.timeout)
		defer cancel()
		got, msgs, err := list(ctx)
		if err == nil && got != l.want {
			err = fmt.Errorf("listed %d containers, want %d", got, l.want)
		}
		return msgs, err
	}
}

func (l *lister) list(ctx context.Context) (int, int, error) {
	resp, err := l.runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return 0, 0, err
	}
	return len(resp.Containers), 1, nil
}

func (l *lister) stream(ctx context.Context) (int, int, error) {
	s, err := l.runtime.StreamContainers(ctx, &runtimeapi.StreamContainersRequest{})
	if err != nil {
		return 0, 0, err
	}
	return collect(s, 0, (*runtimeapi.StreamContainersResponse).GetContainers)
}

func (l *lister) listChunked(ctx context.Context, perChunk int) (int, int, error) {
	s, err := l.chunked.ListContainersChunked(ctx, &cripb.ListContainersChunkedRequest{PerChunk: uint32(perChunk)})
	if err != nil {
		return 0, 0, err
	}
	return collect(s, perChunk, (*cripb.ListContainersChunkedResponse).GetContainers)
}

// collect receives a stream to its end and gathers the containers into one
// slice, as kubelet does (KEP-5825: it processes the items once the stream
// is complete), so that memory per listing compares with ListContainers'.
// A message must carry at least one container, and at most maxPer when
// maxPer > 0.
func collect[M any](s grpc.ServerStreamingClient[M], maxPer int, containers func(*M) []*runtimeapi.Container) (int, int, error) {
	var all []*runtimeapi.Container
	msgs := 0
	for {
		m, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return len(all), msgs, nil
		}
		if err != nil {
			return len(all), msgs, err
		}
		msgs++
		cs := containers(m)
		if len(cs) == 0 {
			return len(all), msgs, fmt.Errorf("message %d carries no container", msgs)
		}
		if maxPer > 0 && len(cs) > maxPer {
			return len(all), msgs, fmt.Errorf("message %d carries %d containers, more than %d", msgs, len(cs), maxPer)
		}
		all = append(all, cs...)
	}
}
