package main

import (
	"flag"
	"fmt"
	"github.com/grpcbench/grpcbench/go/internal/grpctuning"
	"io"
	"math"
	"path/filepath"
	"time"

	"google.golang.org/grpc/credentials"

	"github.com/grpcbench/grpcbench/go/tlsflags"
)

// config is the parsed command line.
type config struct {
	addr                 string
	dbPath               string
	maxConcurrentStreams uint32 // 0 keeps gRPC's default (unlimited)
	shutdownTimeout      time.Duration
	limits               limits
	tuning               grpctuning.Tuning
	tls                  tlsflags.Server
	creds                credentials.TransportCredentials
	cpuProfile           string // write a CPU profile here until the server stops
	heapReport           bool   // serve the heap in use (heapreport.go)
}

// parseFlags parses args (args[0] is the program name). On a usage error it
// has already printed the message and usage to stderr.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	name := filepath.Base(args[0])
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s [flags]\n\n"+
			"Serves the RouteGuide gRPC service, over plaintext or, with -tls, over TLS.\n"+
			"Prints \"listening on HOST:PORT\" to stdout once bound, then a \"runtime ...\"\n"+
			"line, and stops gracefully on SIGINT or SIGTERM.\n\nFlags:\n", name)
		fs.PrintDefaults()
	}

	var cfg config
	var maxStreams uint
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:10000", "`host:port` to listen on; port 0 picks a free port")
	fs.StringVar(&cfg.dbPath, "db", "", "`path` to a JSON feature database (default: the embedded standard database)")
	fs.UintVar(&maxStreams, "max_concurrent_streams", 0, "limit on concurrent streams per HTTP/2 connection (0: gRPC default)")
	fs.DurationVar(&cfg.shutdownTimeout, "shutdown_timeout", 5*time.Second,
		"how long a graceful stop may wait for RPCs in flight before connections are closed")
	fs.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a CPU profile (pprof) of the whole run to `file`, for profiling only")
	fs.BoolVar(&cfg.heapReport, "heap_report", false, "also serve /clgrpc.Diagnostics/HeapInUse, the heap in use (for tests)")
	cfg.limits.register(fs)
	cfg.tuning.Register(fs)
	cfg.tls.Register(fs)

	if err := fs.Parse(args[1:]); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, usageError(fs, "unexpected arguments: %q", fs.Args())
	}
	if maxStreams > math.MaxUint32 {
		return config{}, usageError(fs, "-max_concurrent_streams %d exceeds %d", maxStreams, uint32(math.MaxUint32))
	}
	if cfg.limits.maxConnections < 0 {
		return config{}, usageError(fs, "-max_connections must not be negative")
	}
	if cfg.shutdownTimeout < 0 {
		return config{}, usageError(fs, "-shutdown_timeout must not be negative")
	}
	if err := cfg.tuning.Validate(); err != nil {
		return config{}, usageError(fs, "%v", err)
	}
	creds, err := cfg.tls.Credentials()
	if err != nil {
		return config{}, usageError(fs, "%v", err)
	}
	cfg.creds = creds
	cfg.maxConcurrentStreams = uint32(maxStreams)
	return cfg, nil
}

// usageError reports a bad command line the way the flag package does for
// its own errors: the message, then the usage text.
func usageError(fs *flag.FlagSet, format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	fmt.Fprintln(fs.Output(), err)
	fs.Usage()
	return err
}
