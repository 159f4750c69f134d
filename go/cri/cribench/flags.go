package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/placement"
	"github.com/grpcbench/grpcbench/go/cri/mockcri"
)

// config is the parsed command line.
type config struct {
	modes       methodsFlag
	containers  intsFlag
	annotations intsFlag
	perChunk    intsFlag // chunked only
	labels      int
	seed        uint64
	n           int64
	opTimeout   time.Duration

	server    string           // the mockcri binary to start
	endpoint  mockcri.Endpoint // or a running server
	connect   bool             // endpoint is set: do not start a server
	transport string           // "unix" or "tcp", for a started server

	// tune is the transport tuning of the client and of a started server;
	// its Codec is set per scenario, from codecs.
	tune mockcri.Transport
	// codecs are the codecs measured, each with its own server and
	// connection, in turns with the others.
	codecs stringsFlag
	// gcPercent is the GOGC of this process and of a started server.
	gcPercent int

	cpuProfile string // file for the client's CPU profile, or ""

	cpus  string              // -cpus
	place placement.Placement // -cpus, resolved (unpinned with -endpoint)

	// explicit records the flags given on the command line, to tell a
	// default from a choice where -endpoint makes them mean something else.
	explicit map[string]bool

	harness harness.Flags
}

// parseFlags parses args (args[0] is the program name). On a usage error it
// has already printed the message and the usage to stderr.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	name := filepath.Base(args[0])
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s [flags]\n\n"+
			"Measures CRI container listing, ListContainers vs StreamContainers vs\n"+
			"ListContainersChunked, against a mock runtime it starts (-server) or\n"+
			"one that runs (-endpoint). Each repetition runs -n complete listings.\n\nFlags:\n", name)
		fs.PrintDefaults()
	}

	cfg := config{
		modes:       methodsFlag(slices.Clone(methods)),
		containers:  intsFlag{32},
		annotations: intsFlag{32},
		perChunk:    intsFlag{16},
		codecs:      stringsFlag{mockcri.CodecCRIWire},
		harness:     harness.Flags{Reps: 3, Warmup: harness.Warmup{Ops: 10}},
	}
	cfg.harness.Register(fs)
	fs.Var(&cfg.modes, "mode", "listing `methods`, comma-separated: list (ListContainers), stream (StreamContainers), chunked (ListContainersChunked)")
	fs.Int64Var(&cfg.n, "n", 100, "listings per repetition (fixed iteration count, so wall and CPU times compare)")
	fs.Var(&cfg.containers, "containers", "container `counts`, comma-separated")
	fs.Var(&cfg.annotations, "annotations", "annotations per container, comma-separated `counts`")
	fs.Var(&cfg.perChunk, "per_chunk", "containers per message for -mode chunked, comma-separated `sizes`")
	fs.IntVar(&cfg.labels, "labels", mockcri.DefaultLabels, "labels per container")
	fs.Uint64Var(&cfg.seed, "seed", mockcri.DefaultSeed, "seed of the mock server's generated containers")
	fs.DurationVar(&cfg.opTimeout, "op_timeout", 2*time.Minute, "deadline of one listing (kubelet's default runtime request timeout)")
	fs.StringVar(&cfg.server, "server", "", "`path` of the mockcri binary to start (default: mockcri beside this program, then in $PATH)")
	endpoint := fs.String("endpoint", "", "connect to the CRI server at this `endpoint` (unix:///PATH or tcp://127.0.0.1:PORT) instead of starting one")
	fs.StringVar(&cfg.transport, "transport", "unix", "socket of a started server: unix or tcp (loopback)")

	window := fs.Int("window", 0, "initial HTTP/2 flow-control window of streams and connection, in `bytes`, for the client and a started server alike; 0 keeps grpc-go's dynamic default")
	fs.IntVar(&cfg.tune.Buffer, "buffer", 0, "socket read and write buffer size in `bytes`, client and started server alike; 0 keeps grpc-go's default")
	fs.StringVar(&cfg.tune.Pool, "pool", mockcri.PoolPow2, "buffer `pool` of frames and messages, client and started server alike: "+mockcri.PoolGRPC+" (grpc-go's default) or "+mockcri.PoolPow2+" (a tier at every power of two)")
	fs.Var(&cfg.codecs, "codec", "`codecs` of messages, comma-separated, each measured in turns with its own started server: "+mockcri.CodecProto+" (protobuf-go), "+mockcri.CodecCRIWire+" (container listings without reflection, the rest protobuf-go), or "+mockcri.CodecFloor+" (listings neither encoded nor decoded: grpc-go's own cost, for measuring)")
	fs.IntVar(&cfg.gcPercent, "gogc", mockcri.DefaultGCPercent, "garbage collector `percent` (GOGC) of this process and of a started server; -1 turns it off (see go/cri/README.md)")
	fs.StringVar(&cfg.cpus, "cpus", placement.Auto, placement.Usage+"; with -endpoint, nothing is pinned")
	fs.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a CPU profile of the client (this process) over all scenarios to `file`")

	if err := cfg.harness.Parse(fs, args[1:]); err != nil {
		return config{}, err
	}
	if *window < 0 || *window > 1<<31-1 {
		return config{}, usageError(fs, "-window %d out of range", *window)
	}
	cfg.tune.Window = int32(*window)
	cfg.explicit = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { cfg.explicit[f.Name] = true })
	if *endpoint != "" {
		ep, err := mockcri.ParseEndpoint(*endpoint)
		if err != nil {
			return config{}, usageError(fs, "-endpoint: %v", err)
		}
		cfg.endpoint, cfg.connect = ep, true
	}
	spec, err := placement.Parse(cfg.cpus)
	if err != nil {
		return config{}, usageError(fs, "-cpus: %v", err)
	}
	cfg.place = spec.Resolve()
	if cfg.connect {
		cfg.place = placement.Unpinned("the server runs elsewhere (-endpoint)")
	}
	if err := cfg.check(); err != nil {
		return config{}, usageError(fs, "%v", err)
	}
	return cfg, nil
}

// check reports flag values that cannot make a run.
func (c *config) check() error {
	var errs []error
	if len(c.modes) == 0 {
		errs = append(errs, errors.New("-mode names no method"))
	}
	if c.n < 1 {
		errs = append(errs, fmt.Errorf("-n must be at least 1, got %d", c.n))
	}
	for _, v := range c.containers {
		if v < 1 || v > mockcri.MaxContainers {
			errs = append(errs, fmt.Errorf("-containers must be between 1 and %d, got %d", mockcri.MaxContainers, v))
		}
	}
	for _, v := range c.perChunk {
		if v < 1 || v > 1<<20 {
			errs = append(errs, fmt.Errorf("-per_chunk must be between 1 and %d, got %d", 1<<20, v))
		}
	}
	inventory := mockcri.DefaultConfig(1)
	inventory.Labels = c.labels
	for _, a := range c.annotations {
		inventory.Annotations = a
		if err := inventory.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(c.codecs) == 0 {
		errs = append(errs, errors.New("-codec names no codec"))
	}
	for i, codec := range c.codecs {
		if codec == "" {
			errs = append(errs, errors.New("-codec names an empty codec"))
			continue
		}
		if slices.Contains(c.codecs[:i], codec) {
			errs = append(errs, fmt.Errorf("-codec names %s twice", codec))
		}
		if err := c.tuneFor(codec).Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := mockcri.ValidateGCPercent(c.gcPercent); err != nil {
		errs = append(errs, err)
	}
	if c.opTimeout <= 0 {
		errs = append(errs, fmt.Errorf("-op_timeout must be positive, got %v", c.opTimeout))
	}
	if c.transport != "unix" && c.transport != "tcp" {
		errs = append(errs, fmt.Errorf("-transport must be unix or tcp, got %q", c.transport))
	}
	if c.connect {
		// A running server has one inventory: what it serves is measured,
		// and the flags that would shape a started server's may only
		// describe it.
		if c.explicit["server"] || c.explicit["transport"] || c.explicit["seed"] || c.explicit["labels"] {
			errs = append(errs, errors.New("-endpoint connects to a running server: -server, -transport, -seed and -labels do not apply"))
		}
		if len(c.codecs) != 1 {
			errs = append(errs, errors.New("-endpoint connects to one server: give one -codec, the one it serves with"))
		}
		if len(c.containers) != 1 || len(c.annotations) != 1 {
			errs = append(errs, errors.New("-endpoint connects to one server: give at most one -containers and one -annotations value"))
		}
	}
	return errors.Join(errs...)
}

// tuneFor is the transport tuning of the client, and of a started server,
// that measure with codec.
func (c *config) tuneFor(codec string) mockcri.Transport {
	t := c.tune
	t.Codec = codec
	return t
}

// usageError reports a bad command line the way the flag package does for
// its own errors: the message, then the usage text.
func usageError(fs *flag.FlagSet, format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	fmt.Fprintln(fs.Output(), err)
	fs.Usage()
	return err
}
