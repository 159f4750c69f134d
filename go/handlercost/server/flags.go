package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/grpcbench/grpcbench/go/internal/grpctuning"
)

// config is the parsed command line.
type config struct {
	addr            string
	shutdownTimeout time.Duration
	tuning          grpctuning.Tuning // the go_tuned server's flags
}

// parseFlags parses args (args[0] is the program name). On a usage error it
// has printed the message and the usage to stderr.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	name := filepath.Base(args[0])
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s [flags]\n\n"+
			"Serves the handler-cost service (Fast, Sleep, Spin; raw octets). Prints\n"+
			"\"listening on HOST:PORT\" to stdout once bound, then a \"runtime ...\" line,\n"+
			"answers SIGWINCH with a \"heap live=N\" line, and stops gracefully on SIGINT or\n"+
			"SIGTERM. grpc-go at its defaults unless the tuning flags say otherwise.\n\nFlags:\n", name)
		fs.PrintDefaults()
	}
	var cfg config
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:10000", "`host:port` to listen on; port 0 picks a free port")
	fs.DurationVar(&cfg.shutdownTimeout, "shutdown_timeout", 5*time.Second,
		"how long a graceful stop may wait for calls in flight before connections are closed")
	cfg.tuning.Register(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return config{}, err
	}
	var err error
	switch {
	case fs.NArg() > 0:
		err = fmt.Errorf("unexpected arguments: %q", fs.Args())
	case cfg.shutdownTimeout < 0:
		err = fmt.Errorf("-shutdown_timeout must not be negative")
	default:
		err = cfg.tuning.Validate()
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		fs.Usage()
	}
	return cfg, err
}
