package mockcri

import (
	"context"
	"os"
	"runtime"

	cripb "github.com/grpcbench/grpcbench/proto/cri"
)

// debugService reports the server's own heap counters, so that a benchmark
// client in another process can measure the server's bytes and allocations
// per operation as it measures its own.
type debugService struct {
	cripb.UnimplementedMockRuntimeDebugServer
}

// MemStats reads runtime.MemStats, after a collection when asked.
// ReadMemStats stops the world for a few microseconds, and a collection for
// longer; clients call it between measured repetitions, never during one.
func (debugService) MemStats(_ context.Context, req *cripb.MemStatsRequest) (*cripb.MemStatsResponse, error) {
	if req.GetCollectGarbage() {
		runtime.GC()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return &cripb.MemStatsResponse{
		TotalAllocBytes: m.TotalAlloc,
		Mallocs:         m.Mallocs,
		NumGc:           m.NumGC,
		Pid:             int64(os.Getpid()),
	}, nil
}
