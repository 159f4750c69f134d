package serverproc

import "github.com/grpcbench/grpcbench/go/bench/schema"

// Sample is what a started server held after a repetition: its RSS and
// threads, and the parallelism it said it runs with (0: not said).
type Sample struct{ RSS, Threads, CPUs float64 }

// Sample reads the server's RSS and thread count now (Linux only).
func (p *Process) Sample() (Sample, error) {
	rss, err := p.RSS()
	if err != nil {
		return Sample{}, err
	}
	threads, err := p.Threads()
	if err != nil {
		return Sample{}, err
	}
	return Sample{RSS: float64(rss), Threads: float64(threads), CPUs: float64(p.CPUs())}, nil
}

// SampleMetrics are a cell's server threads, its CPUs where the server said
// them, and with rss its RSS, one figure per repetition; none unless every
// one of the reps repetitions was sampled, so that figures and repetitions
// pair.
func SampleMetrics(reps int, samples []Sample, rss bool) []schema.Metric {
	if len(samples) != reps || reps == 0 {
		return nil
	}
	var rssReps, threads, cpus []float64
	said := true
	for _, s := range samples {
		rssReps, threads, cpus = append(rssReps, s.RSS), append(threads, s.Threads), append(cpus, s.CPUs)
		said = said && s.CPUs > 0
	}
	out := []schema.Metric{schema.NewMetric(schema.MetricServerThreads, schema.UnitCount, schema.LowerIsBetter, threads)}
	if said {
		out = append(out, schema.NewMetric(schema.MetricServerCPUs, schema.UnitCount, schema.LowerIsBetter, cpus))
	}
	if rss {
		out = append(out, schema.NewMetric(schema.MetricServerRSS, schema.UnitBytes, schema.LowerIsBetter, rssReps))
	}
	return out
}
