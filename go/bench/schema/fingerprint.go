package schema

import (
	"bufio"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
)

// Fingerprint describes the machine and Go runtime the caller runs on. It
// fills every machine fact it can find and leaves the build facts
// (BuildConfig, Revision) and SBCLVersion to the caller, which knows them
// from its flags. Facts it cannot read are left as "unknown" (or zero) rather
// than failing: a benchmark should still run on an unusual machine.
func Fingerprint() Environment {
	env := Environment{
		CPUModel:   "unknown",
		CPUCount:   runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		Kernel:     runtime.GOOS,
		GoVersion:  runtime.Version(),
		Platform:   runtime.GOOS + "_" + runtime.GOARCH,
	}
	fillFromOS(&env)
	return env
}

// parseCPUModel returns the processor's name from /proc/cpuinfo content.
// x86 kernels print "model name"; arm64 kernels often print only the
// implementer and part numbers, which still tell two machines apart.
func parseCPUModel(r io.Reader) string {
	fields := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key = strings.TrimSpace(key)
		if _, seen := fields[key]; !seen {
			fields[key] = strings.Join(strings.Fields(val), " ")
		}
	}
	for _, key := range []string{"model name", "Model", "Hardware", "cpu model"} {
		if v := fields[key]; v != "" {
			return v
		}
	}
	if impl, part := fields["CPU implementer"], fields["CPU part"]; impl != "" && part != "" {
		return "CPU implementer " + impl + " part " + part
	}
	return ""
}

// parseMemTotal returns MemTotal from /proc/meminfo content, in bytes.
func parseMemTotal(r io.Reader) int64 {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || kb < 0 || kb > math.MaxInt64/1024 {
				return 0
			}
			return kb * 1024 // the kernel's "kB" is KiB
		}
	}
	return 0
}
