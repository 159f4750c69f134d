package main

import (
	"errors"
	"slices"

	"github.com/grpcbench/grpcbench/go/bench/cgroup"
	"github.com/grpcbench/grpcbench/go/qps/scenarios"
)

// quotaSuite names the results of a run whose server workers were held to
// CPU quotas (-server_cpu_quota): each cap's cells on workers started
// afresh in groups holding it, with both servers at the same cap. The
// report shows the caps side by side and judges each.
const quotaSuite = "qps_quota"

// parseQuotas parses -server_cpu_quota and -server_cpu_period: every capped
// quota at every period, and one uncapped point if 0 is listed.
func parseQuotas(quotas, periods string) ([]cgroup.Quota, error) {
	quotaItems, periodItems := scenarios.SplitList(quotas), scenarios.SplitList(periods)
	switch {
	case len(quotaItems) == 0:
		return nil, errors.New("-server_cpu_quota: empty list")
	case len(periodItems) == 0:
		return nil, errors.New("-server_cpu_period: empty list")
	}
	return cgroup.ParseSweep(quotaItems, periodItems)
}

// capped reports whether any cell runs its servers under a CPU quota.
func (cfg *config) capped() bool { return slices.ContainsFunc(cfg.quotas, cgroup.Quota.Capped) }
