package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/credentials"

	"github.com/grpcbench/grpcbench/go/routeguide/rgclient"
	"github.com/grpcbench/grpcbench/go/tlsflags"
)

// seed fixes the RecordRoute route, so two runs send the same points.
const seed = 1

// config is the parsed command line.
type config struct {
	addr    string
	serve   bool
	rpc     rgclient.Config
	timeout time.Duration
	tls     tlsflags.Client
	creds   credentials.TransportCredentials
}

// parseFlags parses args (args[0] is the program name). On a usage error it
// has already printed the message and usage to stderr.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	name := filepath.Base(args[0])
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s [flags]\n\n"+
			"Calls the RouteGuide RPCs and prints a short report of each, over plaintext\n"+
			"or, with -tls, over TLS.\n\nFlags:\n", name)
		fs.PrintDefaults()
	}

	cfg := config{rpc: rgclient.Config{Seed: seed}}
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:10000", "`host:port` of the server")
	fs.BoolVar(&cfg.serve, "serve", false, "start the server in-process on 127.0.0.1:0 and call it over loopback TCP (excludes -addr)")
	fs.StringVar(&cfg.rpc.RPC, "rpc", "all", "which RPC to call: "+strings.Join(rgclient.RPCNames, "|"))
	fs.IntVar(&cfg.rpc.Points, "points", 10, "number of points RecordRoute sends (a fixed-seed route over database features)")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "deadline for each RPC")
	cfg.tls.Register(fs)

	if err := fs.Parse(args[1:]); err != nil {
		return config{}, err
	}
	addrSet := false
	fs.Visit(func(f *flag.Flag) { addrSet = addrSet || f.Name == "addr" })
	switch {
	case fs.NArg() > 0:
		return config{}, usageError(fs, "unexpected arguments: %q", fs.Args())
	case cfg.serve && addrSet:
		return config{}, usageError(fs, "-serve and -addr are mutually exclusive")
	case !slices.Contains(rgclient.RPCNames, cfg.rpc.RPC):
		return config{}, usageError(fs, "-rpc %q is not one of %s", cfg.rpc.RPC, strings.Join(rgclient.RPCNames, "|"))
	case cfg.rpc.Points < 0:
		return config{}, usageError(fs, "-points must not be negative")
	case cfg.timeout <= 0:
		return config{}, usageError(fs, "-timeout must be positive")
	case cfg.serve && cfg.tls.TLS:
		return config{}, usageError(fs, "-serve and -tls are mutually exclusive: the in-process server is plaintext")
	}
	creds, err := cfg.tls.Credentials()
	if err != nil {
		return config{}, usageError(fs, "%v", err)
	}
	cfg.creds = creds
	cfg.rpc.Timeout = cfg.timeout
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
