package serverproc

import (
	"fmt"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// Sample is what a started server held after a repetition: its RSS and
// threads, the heap its last collection left where it reports it (heap.go;
// 0: it does not), and the parallelism it said at its start that it runs
// with (0: not said).
type Sample struct{ RSS, Threads, LiveHeap, Parallelism float64 }

// Sample reads the server's RSS and thread count now, in one read of its
// status (Linux only), and asks for its heap line if it serves one. A heap
// line that does not come leaves LiveHeap 0, and the cell without that
// figure, but keeps the rest; the failure goes to the server's log.
func (p *Process) Sample() (Sample, error) {
	v, err := statusFields(p.PID(), "VmRSS", "Threads")
	if err != nil {
		return Sample{}, err
	}
	live, _, err := p.LiveHeap()
	if err != nil && p.log != nil {
		fmt.Fprintf(p.log, "serverproc: %v\n", err)
	}
	return Sample{RSS: float64(v[0] * 1024), Threads: float64(v[1]), LiveHeap: live, Parallelism: float64(p.Parallelism())}, nil
}

// SampleMetrics are a cell's server threads, its parallelism and its live
// heap where the server said them, and with rss its RSS, one figure per repetition; none unless every
// one of the reps repetitions was sampled, so that figures and repetitions
// pair.
func SampleMetrics(reps int, samples []Sample, rss bool) []schema.Metric {
	if len(samples) != reps || reps == 0 {
		return nil
	}
	var rssReps, threads, heap, procs []float64
	said, heapSaid := true, true
	for _, s := range samples {
		rssReps, threads, procs = append(rssReps, s.RSS), append(threads, s.Threads), append(procs, s.Parallelism)
		heap = append(heap, s.LiveHeap)
		said = said && s.Parallelism > 0
		heapSaid = heapSaid && s.LiveHeap > 0
	}
	out := []schema.Metric{schema.NewMetric(schema.MetricServerThreads, schema.UnitCount, schema.LowerIsBetter, threads)}
	if said {
		// A setting rather than a figure to better, but results require a
		// direction: fewer CPUs for the same work, as threads.
		out = append(out, schema.NewMetric(schema.MetricServerParallelism, schema.UnitCount, schema.LowerIsBetter, procs))
	}
	if rss {
		out = append(out, schema.NewMetric(schema.MetricServerRSS, schema.UnitBytes, schema.LowerIsBetter, rssReps))
	}
	if heapSaid {
		out = append(out, schema.NewMetric(schema.MetricServerLiveHeap, schema.UnitBytes, schema.LowerIsBetter, heap))
	}
	return out
}
