package main

import (
	"fmt"

	"github.com/grpcbench/grpcbench/go/bench/cgroup"
)

// quotaSweepSuite names the results of a run over several CPU quotas
// (-server_cpu_quota with more than one point): each point's cells on
// servers started afresh, born in groups holding that quota. The report
// shows the points side by side and judges each, and the sweep as a whole.
const quotaSweepSuite = "routeguide_quota"

// parseQuotaPoints parses -server_cpu_quota and -server_cpu_period: every
// capped quota at every period, and one uncapped point if 0 is listed, in
// the order given.
func parseQuotaPoints(quotas, periods string) ([]cgroup.Quota, error) {
	periodItems, err := splitList(periods)
	if err != nil {
		return nil, fmt.Errorf("-server_cpu_period: %v", err)
	}
	quotaItems, err := splitList(quotas)
	if err != nil {
		return nil, fmt.Errorf("-server_cpu_quota: %v", err)
	}
	return cgroup.ParseSweep(quotaItems, periodItems)
}
