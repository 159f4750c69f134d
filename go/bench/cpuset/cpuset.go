// Package cpuset gives a benchmark's server and load generator disjoint
// sets of CPUs, so that what one process costs is not paid by the other
// and the figures of each side are its own.
package cpuset

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// MaxCPU is the largest CPU number Parse accepts: Linux supports at most
// 8192 CPUs (CONFIG_NR_CPUS).
const MaxCPU = 8191

// Set is a sorted list of distinct CPU numbers.
type Set []int

// Parse reads a CPU list as the kernel writes one (cpuset(7)):
// "0", "0-3", "0,2,4-5". A CPU number beyond MaxCPU is an error, so that
// a range cannot make a set larger than any machine's.
func Parse(s string) (Set, error) {
	var set Set
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil || first < 0 || first > MaxCPU {
			return nil, fmt.Errorf("CPU list %q: %q is not a CPU number from 0 to %d", s, lo, MaxCPU)
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil || last < first || last > MaxCPU {
				return nil, fmt.Errorf("CPU list %q: %q is not a range of CPU numbers up to %d", s, part, MaxCPU)
			}
		}
		for c := first; c <= last; c++ {
			set = append(set, c)
		}
	}
	slices.Sort(set)
	if len(slices.Compact(set)) != len(set) {
		return nil, fmt.Errorf("CPU list %q names a CPU twice", s)
	}
	return set, nil
}

// String writes the set as a CPU list, ranges collapsed: "0-2,5".
func (s Set) String() string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(s[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(s[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Overlaps reports whether the two sets share a CPU.
func (s Set) Overlaps(o Set) bool {
	for _, c := range s {
		if slices.Contains(o, c) {
			return true
		}
	}
	return false
}

// Split divides usable CPUs between a server and its load generator by
// physical core: SMT siblings share a core's execution units, so a server
// on one thread of a core and its load generator on the other would still
// take each other's time. The server gets the first half of the cores,
// rounded down, with all their usable threads, and the load generator the
// rest. Where every usable CPU is on one core, or the topology is unknown,
// each CPU counts as a core of its own. With fewer than two CPUs there is
// nothing to divide, and ok is false.
func Split(usable Set) (server, client Set, ok bool) {
	return splitByCore(usable, readCore)
}

func splitByCore(usable Set, coreOf func(cpu int) (core, bool)) (server, client Set, ok bool) {
	if len(usable) < 2 {
		return nil, nil, false
	}
	// The usable CPUs grouped by core, cores in the order of their first CPU.
	var cores [][]int
	index := map[core]int{}
	for _, cpu := range usable {
		c, known := coreOf(cpu)
		if !known {
			c = core{pkg: -1, id: cpu}
		}
		i, seen := index[c]
		if !seen {
			i = len(cores)
			index[c] = i
			cores = append(cores, nil)
		}
		cores[i] = append(cores[i], cpu)
	}
	if len(cores) < 2 {
		// One core's threads: nothing better than splitting them.
		cores = cores[:0]
		for _, cpu := range usable {
			cores = append(cores, []int{cpu})
		}
	}
	n := len(cores) / 2
	return flatten(cores[:n]), flatten(cores[n:]), true
}

// core identifies a physical core: by its first thread, where sysfs lists
// the core's threads (pkg 0); by the CPU itself where it does not (pkg -1).
type core struct{ pkg, id int }

// readCore reads a CPU's core from sysfs: the threads that share it
// (core_cpus_list, or thread_siblings_list on kernels before 5.7), named by
// the first. Not physical_package_id and core_id: core_id is unique only
// within a die or cluster on some machines (multi-die x86 packages, arm64
// clusters), which would join distinct cores. False where not reported.
func readCore(cpu int) (core, bool) {
	for _, name := range []string{"core_cpus_list", "thread_siblings_list"} {
		b, err := os.ReadFile(fmt.Sprintf("/sys/devices/system/cpu/cpu%d/topology/%s", cpu, name))
		if err != nil {
			continue
		}
		threads, err := Parse(strings.TrimSpace(string(b)))
		if err != nil || !slices.Contains(threads, cpu) {
			continue
		}
		return core{0, slices.Min(threads)}, true
	}
	return core{}, false
}

func flatten(groups [][]int) Set {
	var out Set
	for _, g := range groups {
		out = append(out, g...)
	}
	slices.Sort(out)
	return out
}
