package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"

	"github.com/grpcbench/grpcbench/go/bench/cpuprofile"
	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	"github.com/grpcbench/grpcbench/go/cri/mockcri"
)

const (
	suite   = "cri"
	pkgPath = "github.com/grpcbench/grpcbench/go/cri/cribench"
)

// run is the whole program minus signal wiring: it parses args (args[0] is
// the program name), runs every scenario, prints and writes the results,
// and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return harness.ExitOK
	}
	if err != nil {
		return harness.ExitUsage
	}
	debug.SetGCPercent(cfg.gcPercent)
	b := &bench{cfg: cfg, log: harness.SharedLog(stderr)}
	if !cfg.connect {
		if b.serverPath, err = findServer(cfg.server); err != nil {
			fmt.Fprintf(stderr, "cri-bench: %v\n", err)
			return harness.ExitUsage
		}
	}

	stopProfile, err := cpuprofile.Start(cfg.cpuProfile)
	if err != nil {
		fmt.Fprintf(stderr, "cri-bench: %v\n", err)
		return harness.ExitUsage
	}
	// Pinned before the environment is read, so that it records the
	// GOMAXPROCS the measurement runs with.
	if err := b.cfg.place.PinSelf(); err != nil {
		fmt.Fprintf(b.log, "cri-bench: %v\n", err)
	}
	file := schema.NewFile(suite, cfg.harness.Environment())
	b.cfg.place.Record(file.Environment.Extra)
	// runRounds measures every scenario of a group a repetition each per
	// round.
	file.Environment.Extra[schema.ExtraRepsPaired] = schema.PairedByRound
	recordPeers(file.Environment.Extra, b.serverPath)
	if cfg.connect {
		file.Results = b.runEndpoint(ctx)
	} else {
		for _, g := range plan(cfg) {
			file.Results = append(file.Results, b.runStarted(ctx, g)...)
		}
	}

	if err := stopProfile(); err != nil {
		fmt.Fprintf(stderr, "cri-bench: cpu profile: %v\n", err)
		return harness.ExitFailed
	}
	return cfg.harness.Finish(stdout, b.log, file, pkgPath, summaryTable(file.Results))
}

// recordPeers notes both peers' code in extra: a listing's CPU is the
// mock server's encoding as much as this client's decoding, so a document
// that shows the figures is stale once either binary changes. The server
// is recorded only when this process started it (serverPath is empty
// with -endpoint).
func recordPeers(extra map[string]string, serverPath string) {
	if serverPath != "" {
		extra[schema.ExtraServer] = schema.ServerName("mockcri", serverPath)
		extra[schema.ExtraServerSHA256] = schema.FileSHA256(serverPath)
	}
	extra[schema.ExtraClient] = "cri-bench"
	extra[schema.ExtraClientSHA256] = extra[schema.ExtraBinarySHA256]
}

// bench runs scenarios against servers.
type bench struct {
	cfg        config
	serverPath string // the mockcri binary, unless -endpoint
	log        io.Writer
}

// findServer returns the mockcri binary: the -server flag, else mockcri
// beside this program (go install puts both in one directory), else $PATH.
func findServer(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if exe, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(exe), "mockcri")
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return beside, nil
		}
	}
	path, err := exec.LookPath("mockcri")
	if err != nil {
		return "", errors.New("no mockcri binary beside cri-bench or in $PATH: pass -server PATH, or -endpoint to use a running server")
	}
	return path, nil
}

// runStarted starts a mock server per codec for g, runs g's scenarios
// against them in turns, and stops them. A server that fails to start fails
// every scenario of g.
func (b *bench) runStarted(ctx context.Context, g serverGroup) []schema.Result {
	sessions := make(map[string]*session)
	for _, codec := range b.cfg.codecs {
		sess, stop, err := b.startServer(ctx, g, codec)
		if err != nil {
			var out []schema.Result
			for _, s := range g.scenarios {
				out = append(out, harness.ErrorResult(s.name(), s.params(b.cfg.transport, b.cfg), err))
			}
			return out
		}
		defer stop()
		sessions[codec] = sess
	}
	return b.runRounds(ctx, sessions, g.scenarios)
}

// startServer starts a mock server for g with codec and connects to it;
// stop closes the connection and stops the server.
func (b *bench) startServer(ctx context.Context, g serverGroup, codec string) (sess *session, stop func(), err error) {
	var cleanup []func()
	stop = func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	listen := "tcp://127.0.0.1:0"
	if b.cfg.transport == "unix" {
		dir, sock, err := mockcri.SocketDir("mockcri.sock")
		if err != nil {
			return nil, nil, err
		}
		cleanup = append(cleanup, func() { os.RemoveAll(dir) })
		listen = "unix://" + sock
	}
	tune := b.cfg.tuneFor(codec)
	proc, ep, err := startServer(ctx, []string{b.serverPath,
		"-listen", listen,
		"-containers", strconv.Itoa(g.containers),
		"-annotations", strconv.Itoa(g.annotations),
		"-labels", strconv.Itoa(b.cfg.labels),
		"-seed", strconv.FormatUint(b.cfg.seed, 10),
		"-window", strconv.Itoa(int(tune.Window)),
		"-buffer", strconv.Itoa(tune.Buffer),
		"-pool", tune.Pool,
		"-codec", tune.Codec,
		"-gogc", strconv.Itoa(b.cfg.gcPercent),
	}, b.cfg.place.Server, b.log)
	if err != nil {
		return nil, nil, fmt.Errorf("starting %s: %w", b.serverPath, err)
	}
	cleanup = append(cleanup, func() {
		if err := proc.Stop(); err != nil {
			fmt.Fprintf(b.log, "cri-bench: %v\n", err)
		}
	})
	sess, err = openSession(ctx, ep, proc, tune)
	if err != nil {
		return nil, nil, err
	}
	cleanup = append(cleanup, func() { sess.close() })
	if sess.containers != g.containers {
		return nil, nil, fmt.Errorf("the server lists %d containers, want %d", sess.containers, g.containers)
	}
	return sess, stop, nil
}

// runEndpoint runs every scenario against the server at -endpoint. What it
// serves is what is measured: -containers and -annotations, if given, must
// agree with it.
func (b *bench) runEndpoint(ctx context.Context) []schema.Result {
	codec := b.cfg.codecs[0]
	sess, err := openSession(ctx, b.cfg.endpoint, nil, b.cfg.tuneFor(codec))
	containers, annotations := b.cfg.containers[0], b.cfg.annotations[0]
	if err == nil {
		defer sess.close()
		switch {
		case b.cfg.explicit["containers"] && sess.containers != containers:
			err = fmt.Errorf("%s lists %d containers, -containers says %d", b.cfg.endpoint, sess.containers, containers)
		case b.cfg.explicit["annotations"] && sess.annotations != annotations:
			err = fmt.Errorf("%s's containers have %d annotations, -annotations says %d", b.cfg.endpoint, sess.annotations, annotations)
		}
		containers, annotations = sess.containers, sess.annotations
	}
	scs := scenarios(b.cfg, containers, annotations)
	if err != nil {
		var out []schema.Result
		for _, s := range scs {
			out = append(out, harness.ErrorResult(s.name(), s.params(b.cfg.endpoint.Network, b.cfg), err))
		}
		return out
	}
	return b.runRounds(ctx, map[string]*session{codec: sess}, scs)
}
