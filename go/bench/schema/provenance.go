package schema

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
)

// Keys of Environment.Extra that several suites and the report share.
const (
	// ExtraBinarySHA256 is the SHA-256 of the measuring binary.
	ExtraBinarySHA256 = "binary_sha256"
	// ExtraGOGC is the measuring Go process's GOGC ("off" when disabled).
	ExtraGOGC = "gogc"
	// ExtraClient names the client that made the calls when it is not
	// grpc-go in the measuring process ("lisp": the Lisp load generator,
	// driven by the Go one), and ExtraClientSHA256 is its binary's SHA-256.
	ExtraClient       = "client"
	ExtraClientSHA256 = "client_sha256"
	// ExtraServer names the server a load generator measured.
	ExtraServer = "server"
	// ExtraServerSHA256 is the SHA-256 of that server's binary.
	ExtraServerSHA256 = "server_sha256"
	// ExtraServerRuntime is the runtime settings the server was started
	// with, as far as the load generator sets them.
	ExtraServerRuntime = "server_runtime"
	// ExtraServerArgs are the extra arguments it was started with, such
	// as a tuning flag; absent when none.
	ExtraServerArgs = "server_args"
	// ExtraRivalPrefix starts the keys that describe a second server,
	// measured in turns with the first in the same run: "rival_" +
	// ExtraServer, ExtraServerSHA256, ExtraServerArgs.
	ExtraRivalPrefix = "rival_"
	// ExtraVariantPrefix starts the keys of further servers measured in the
	// same turns, each a server's binary with arguments of its own:
	// "variant_" + its label + "_" + ExtraServer, ExtraServerSHA256,
	// ExtraServerArgs.
	ExtraVariantPrefix = "variant_"
	// ExtraServerCPUs and ExtraClientCPUs are the CPU sets of a pinned run
	// (cpuset list syntax, "0" or "0-3").
	ExtraServerCPUs = "server_cpus"
	ExtraClientCPUs = "client_cpus"
	// ExtraCPUs says why a run was not pinned.
	ExtraCPUs = "cpus"
	// ExtraServerCPUQuota is the CPU quota the servers were held to, if
	// any ("0.25 cores (a CFS quota per 10ms period)").
	ExtraServerCPUQuota = "server_cpu_quota"
	// ExtraServerCPUClock is where the servers' CPU time was read: their
	// cgroups' cpu.stat, to the microsecond, or /proc/PID/stat, in clock
	// ticks (harness.CPUClockCgroup, CPUClockProc).
	ExtraServerCPUClock = "server_cpu_clock"
	// ExtraOrderSeed is the seed of a run whose cells ran in a random
	// order, which gives that order again.
	ExtraOrderSeed = "order_seed"
	// ExtraRunID identifies the measuring process (NewRunID): results
	// that carry one run ID were measured in turns in one run, so in one
	// build action, and only such results are compared (go/bench/report).
	ExtraRunID = "run_id"
	// ExtraRepsPaired, set to PairedByRound, says that the servers of each
	// scenario were measured in turns, one repetition each per round
	// (harness.InTurns): the i-th repetitions of two servers' cells of one
	// scenario come from one round, and pair.
	ExtraRepsPaired = "reps_paired"
	PairedByRound   = "round"
)

// NewRunID is a random identifier for one measuring run: 128 bits, so
// that two runs never share one.
func NewRunID() string {
	return rand.Text()
}

// FileSHA256 is the hex SHA-256 of the file at path, so that results name
// the exact binaries they measured; "" if it cannot be read.
func FileSHA256(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// GOGC is this process's garbage collector percent as GOGC spells it:
// "100" by default, "off" when disabled.
func GOGC() string {
	// SetGCPercent is the only reader; setting the value back at once
	// leaves the collector as it was.
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	if p < 0 {
		return "off"
	}
	return strconv.Itoa(p)
}

// ServerName describes a server started from the binary at path under the
// label impl, as ExtraServer records it: "go server", with the binary's
// name after it only when that says more than "server" ("lisp server
// (worker)").
func ServerName(impl, path string) string {
	base := filepath.Base(path)
	if base == "server" || base == impl || base == "." || base == "/" {
		return impl + " server"
	}
	return impl + " server (" + base + ")"
}
