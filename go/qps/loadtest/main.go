// Command loadtest writes grpc/test-infra LoadTests (e2etest.grpc.io/v1)
// for gRPC's standard scenarios as //bench/qps measures them: one LoadTest
// per scenario, payload and {server, client} pairing of our qps worker
// images, with gRPC's own driver. Apply them to a cluster that runs
// test-infra's controller:
//
//	loadtest -go_image REGISTRY/grpcbench/qps-worker-go@sha256:... \
//	    -lisp_image REGISTRY/grpcbench/qps-worker-lisp@sha256:... > loadtests.yaml
//	kubectl apply -f loadtests.yaml
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/grpcbench/grpcbench/go/qps/scenarios"
)

type config struct {
	opts              options
	servers, clients  []string
	shapes            []scenarios.Shape
	payloads          []int
	warmup, benchmark int
	out               string
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &config{opts: options{images: map[string]string{}}}
	var goImage, lispImage, servers, clients, names, payloads string
	var timeout, ttl int
	fs.StringVar(&goImage, "go_image", "", "`image` of grpc-go's qps worker (//go/qps/image), as the cluster pulls it")
	fs.StringVar(&lispImage, "lisp_image", "", "`image` of the Lisp qps worker (//lisp/qps/image)")
	fs.StringVar(&cfg.opts.driverImage, "driver_image", "", "`image` of the driver; empty: the controller's default, gRPC's C++ qps_json_driver")
	fs.StringVar(&servers, "servers", "go,lisp", "server workers: go, lisp")
	fs.StringVar(&clients, "clients", "go,lisp", "client workers: go, lisp")
	fs.StringVar(&names, "scenarios", "unary_ping_pong,streaming_ping_pong,unary_qps_unconstrained,streaming_qps_unconstrained", "scenarios, comma-separated")
	fs.StringVar(&payloads, "payloads", "0,1024", "payload `sizes` in octets, comma-separated")
	fs.IntVar(&cfg.warmup, "warmup_seconds", 5, "warm-up of each scenario, as gRPC's scenarios have it")
	fs.IntVar(&cfg.benchmark, "benchmark_seconds", 30, "measured time of each scenario")
	fs.StringVar(&cfg.opts.prefix, "prefix", "grpcbench", "prefix of every LoadTest's name, and its prefix label")
	fs.StringVar(&cfg.opts.pool, "pool", "", "node pool of the servers and clients (empty: the controller's default)")
	fs.IntVar(&timeout, "timeout_seconds", 900, "longest a LoadTest may run")
	fs.IntVar(&ttl, "ttl_seconds", 86400, "longest a LoadTest stays on the cluster")
	fs.StringVar(&cfg.out, "out", "", "`file` to write (default stdout)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	fail := func(format string, a ...any) (*config, error) {
		err := fmt.Errorf(format, a...)
		fmt.Fprintln(stderr, err)
		fs.Usage()
		return nil, err
	}
	if fs.NArg() > 0 {
		return fail("unexpected arguments: %q", fs.Args())
	}
	images := map[string]string{"go": goImage, "lisp": lispImage}
	for _, list := range []struct {
		flag string
		text string
		dst  *[]string
	}{{"-servers", servers, &cfg.servers}, {"-clients", clients, &cfg.clients}} {
		for _, impl := range scenarios.SplitList(list.text) {
			ref, known := images[impl]
			if !known {
				return fail("%s: %q is not go or lisp", list.flag, impl)
			}
			if err := checkImage(impl, ref); err != nil {
				return fail("%v", err)
			}
			cfg.opts.images[impl] = ref
			*list.dst = append(*list.dst, impl)
		}
		if len(*list.dst) == 0 {
			return fail("%s names no worker", list.flag)
		}
	}
	var err error
	if cfg.shapes, cfg.payloads, err = scenarios.ParseSelection(names, payloads); err != nil {
		return fail("%v", err)
	}
	switch {
	case cfg.warmup < 0 || cfg.benchmark < 1:
		return fail("-warmup_seconds must be at least 0 and -benchmark_seconds at least 1")
	case timeout < cfg.warmup+cfg.benchmark || ttl < timeout || ttl > 1<<31-1:
		return fail("-timeout_seconds must cover the scenario and -ttl_seconds the timeout")
	}
	cfg.opts.timeoutSeconds, cfg.opts.ttlSeconds = int32(timeout), int32(ttl)
	return cfg, nil
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	out, err := render(cfg)
	if err == nil {
		if cfg.out == "" {
			_, err = os.Stdout.Write(out)
		} else {
			err = os.WriteFile(cfg.out, out, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "loadtest: %v\n", err)
		os.Exit(1)
	}
}

// render writes every LoadTest as one YAML stream, in a fixed order.
func render(cfg *config) ([]byte, error) {
	var b bytes.Buffer
	for _, sh := range cfg.shapes {
		for _, payload := range cfg.payloads {
			sc := sh.Scenario(payload, cfg.warmup, cfg.benchmark)
			for _, server := range cfg.servers {
				for _, client := range cfg.clients {
					lt, err := newLoadTest(sc, server, client, cfg.opts)
					if err != nil {
						return nil, err
					}
					doc, err := yaml.Marshal(lt)
					if err != nil {
						return nil, err
					}
					b.WriteString("---\n")
					b.Write(doc)
				}
			}
		}
	}
	return b.Bytes(), nil
}

// compactJSON removes the whitespace protojson varies on purpose from
// build to build, so that the same inputs give the same LoadTests.
func compactJSON(data []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		return data
	}
	return b.Bytes()
}
