package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/grpcbench/grpcbench/go/cri/mockcri"
)

// config is the parsed command line.
type config struct {
	endpoint        mockcri.Endpoint
	inventory       mockcri.Config
	transport       mockcri.Transport
	shutdownTimeout time.Duration
	cpuProfile      string // file to write a CPU profile to, or ""
	gcPercent       int    // GOGC of the server process
}

// parseFlags parses args (args[0] is the program name). On a usage error it
// has already printed the message and usage to stderr.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	name := filepath.Base(args[0])
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s [flags]\n\n"+
			"Serves a mock CRI runtime with a generated set of containers. Prints\n"+
			"\"listening on ENDPOINT\" to stdout once bound, and stops gracefully on\n"+
			"SIGINT or SIGTERM.\n\nFlags:\n", name)
		fs.PrintDefaults()
	}

	cfg := config{inventory: mockcri.DefaultConfig(32)}
	inv := &cfg.inventory
	listen := fs.String("listen", "unix:///tmp/mockcri.sock", "`endpoint` to serve: unix:///PATH or tcp://127.0.0.1:PORT (port 0 picks one)")
	fs.IntVar(&inv.Containers, "containers", inv.Containers, "number of containers")
	fs.IntVar(&inv.Annotations, "annotations", inv.Annotations, "annotations per container (the first 6 are kubelet's)")
	fs.IntVar(&inv.Labels, "labels", inv.Labels, "labels per container (the first 4 are kubelet's)")
	fs.IntVar(&inv.ContainersPerPod, "containers_per_pod", inv.ContainersPerPod, "containers per pod sandbox")
	fs.Uint64Var(&inv.Seed, "seed", inv.Seed, "seed of the generated inventory; the same seed gives the same containers")
	fs.DurationVar(&cfg.shutdownTimeout, "shutdown_timeout", 5*time.Second,
		"how long a graceful stop may wait for RPCs in flight before connections are closed")

	window := fs.Int("window", 0, "initial HTTP/2 flow-control window of streams and the connection, in `bytes`; 0 keeps grpc-go's dynamic default")
	fs.IntVar(&cfg.transport.Buffer, "buffer", 0, "socket read and write buffer size in `bytes`; 0 keeps grpc-go's default")
	fs.StringVar(&cfg.transport.Pool, "pool", mockcri.PoolGRPC, "buffer `pool` of frames and messages: "+mockcri.PoolGRPC+" (grpc-go's default) or "+mockcri.PoolPow2+" (a tier at every power of two)")
	fs.StringVar(&cfg.transport.Codec, "codec", mockcri.CodecProto, "`codec` of messages: "+mockcri.CodecProto+" (protobuf-go), "+mockcri.CodecCRIWire+" (container listings without reflection, the rest protobuf-go), or "+mockcri.CodecFloor+" (listings neither encoded nor decoded: grpc-go's own cost, for measuring)")
	fs.IntVar(&cfg.gcPercent, "gogc", mockcri.DefaultGCPercent, "garbage collector `percent` (GOGC) of this process; -1 turns it off")
	fs.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to `file` when the server stops")
	if err := fs.Parse(args[1:]); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, usageError(fs, "unexpected arguments: %q", fs.Args())
	}
	ep, err := mockcri.ParseEndpoint(*listen)
	if err != nil {
		return config{}, usageError(fs, "-listen: %v", err)
	}
	cfg.endpoint = ep
	if *window < 0 || *window > 1<<31-1 {
		return config{}, usageError(fs, "-window %d out of range", *window)
	}
	cfg.transport.Window = int32(*window)
	if err := cfg.transport.Validate(); err != nil {
		return config{}, usageError(fs, "%v", err)
	}
	if err := inv.Validate(); err != nil {
		return config{}, usageError(fs, "%v", err)
	}
	if err := mockcri.ValidateGCPercent(cfg.gcPercent); err != nil {
		return config{}, usageError(fs, "%v", err)
	}
	if cfg.shutdownTimeout < 0 {
		return config{}, usageError(fs, "-shutdown_timeout must not be negative")
	}
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
