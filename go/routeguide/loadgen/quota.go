package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/cgroup"
)

// quotaSweepSuite names the results of a run over several CPU quotas
// (-server_cpu_quota with more than one point): each point's cells on
// servers started afresh, born in groups holding that quota. The report
// shows the points side by side and judges each, and the sweep as a whole.
const quotaSweepSuite = "routeguide_quota"

// quotaPoint is one CPU cap the servers are measured under: cores of CPU
// time per CFS period, or none (cores 0).
type quotaPoint struct {
	cores  float64
	period time.Duration
}

func (q quotaPoint) capped() bool { return q.cores > 0 }

// periodLabel is the period as the results name it: "none" uncapped.
func (q quotaPoint) periodLabel() string {
	if !q.capped() {
		return "none"
	}
	return q.period.String()
}

// parseQuotaPoints parses -server_cpu_quota and -server_cpu_period: every
// capped quota at every period, and one uncapped point if 0 is listed, in
// the order given.
func parseQuotaPoints(quotas, periods string) ([]quotaPoint, error) {
	periodItems, err := splitList(periods)
	if err != nil {
		return nil, fmt.Errorf("-server_cpu_period: %v", err)
	}
	var ps []time.Duration
	for _, item := range periodItems {
		p, err := time.ParseDuration(item)
		switch {
		case err != nil:
			return nil, fmt.Errorf("-server_cpu_period %q: not a duration", item)
		case p < cgroup.MinPeriod || p > cgroup.MaxPeriod:
			return nil, fmt.Errorf("-server_cpu_period %v: the kernel accepts %v to %v", p, cgroup.MinPeriod, cgroup.MaxPeriod)
		case slices.Contains(ps, p):
			return nil, fmt.Errorf("-server_cpu_period %v given twice", p)
		}
		ps = append(ps, p)
	}
	quotaItems, err := splitList(quotas)
	if err != nil {
		return nil, fmt.Errorf("-server_cpu_quota: %v", err)
	}
	var points []quotaPoint
	var seen []float64
	for _, item := range quotaItems {
		cores, err := strconv.ParseFloat(item, 64)
		switch {
		case err != nil:
			return nil, fmt.Errorf("-server_cpu_quota %q: not a number of cores", item)
		case cores < 0 || cores > maxServerQuota:
			return nil, fmt.Errorf("-server_cpu_quota must be 0 (none) or up to %d cores, got %g", maxServerQuota, cores)
		case slices.Contains(seen, cores):
			return nil, fmt.Errorf("-server_cpu_quota %g given twice", cores)
		}
		seen = append(seen, cores)
		if cores == 0 {
			points = append(points, quotaPoint{})
			continue
		}
		for _, p := range ps {
			if min := cgroup.MinCores(p); cores < min {
				return nil, fmt.Errorf("-server_cpu_quota %g is below the kernel's 1 ms per %v period (%g cores)", cores, p, min)
			}
			points = append(points, quotaPoint{cores, p})
		}
	}
	return points, nil
}

// describeQuotas says in the results what the servers were held to.
func describeQuotas(points []quotaPoint) string {
	var parts []string
	for _, q := range points {
		if q.capped() {
			parts = append(parts, fmt.Sprintf("%g cores (a CFS quota per %v period)", q.cores, q.period))
		} else {
			parts = append(parts, "none")
		}
	}
	return strings.Join(parts, "; ")
}
