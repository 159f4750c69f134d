package cgroup

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxSweepCores is the largest cap a sweep takes: a cap is for giving a
// load generator headroom on a small machine, or for seeing how a server
// fares with less than a core, not for a server of many cores.
const MaxSweepCores = 64

// Capped reports whether q caps anything: a quota of 0 cores is none.
func (q Quota) Capped() bool { return q.Cores > 0 }

// PeriodLabel is q's period as results name it: "none" uncapped.
func (q Quota) PeriodLabel() string {
	if !q.Capped() {
		return "none"
	}
	return q.period().String()
}

// ParseSweep turns the items of the -server_cpu_quota and
// -server_cpu_period lists (cores, 0 for none; durations) into the points
// of a sweep: every capped quota at every period, and one uncapped point
// where 0 is listed, in the order given.
func ParseSweep(quotas, periods []string) ([]Quota, error) {
	var ps []time.Duration
	for _, item := range periods {
		p, err := time.ParseDuration(item)
		switch {
		case err != nil:
			return nil, fmt.Errorf("-server_cpu_period %q: not a duration", item)
		case p < MinPeriod || p > MaxPeriod:
			return nil, fmt.Errorf("-server_cpu_period %v: the kernel accepts %v to %v", p, MinPeriod, MaxPeriod)
		case slices.Contains(ps, p):
			return nil, fmt.Errorf("-server_cpu_period %v given twice", p)
		}
		ps = append(ps, p)
	}
	var points []Quota
	var seen []float64
	for _, item := range quotas {
		cores, err := strconv.ParseFloat(item, 64)
		switch {
		case err != nil:
			return nil, fmt.Errorf("-server_cpu_quota %q: not a number of cores", item)
		case cores < 0 || cores > MaxSweepCores:
			return nil, fmt.Errorf("-server_cpu_quota must be 0 (none) or up to %d cores, got %g", MaxSweepCores, cores)
		case slices.Contains(seen, cores):
			return nil, fmt.Errorf("-server_cpu_quota %g given twice", cores)
		}
		seen = append(seen, cores)
		if cores == 0 {
			points = append(points, Quota{})
			continue
		}
		for _, p := range ps {
			if least := MinCores(p); cores < least {
				return nil, fmt.Errorf("-server_cpu_quota %g is below the kernel's 1 ms per %v period (%g cores)", cores, p, least)
			}
			points = append(points, Quota{Cores: cores, Period: p})
		}
	}
	return points, nil
}

// DescribeSweep says in results what the servers were held to.
func DescribeSweep(points []Quota) string {
	var parts []string
	for _, q := range points {
		if q.Capped() {
			parts = append(parts, fmt.Sprintf("%g cores (a CFS quota per %v period)", q.Cores, q.period()))
		} else {
			parts = append(parts, "none")
		}
	}
	return strings.Join(parts, "; ")
}
