package main

import (
	"encoding/json"
	"fmt"
	"strings"

	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/encoding/protojson"
)

// The resource grpc/test-infra's controller runs (its CRD,
// config/crd/bases/e2etest.grpc.io_loadtests.yaml), as far as these
// LoadTests use it. Written out here rather than imported: test-infra's Go
// types pull in a controller-runtime and Kubernetes libraries far older
// than this module's; the CRD itself, installed into a real API server by
// //go/qps/loadtest:kcp_test, checks that these fields are the CRD's.
type LoadTest struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       Spec     `json:"spec"`
}

type Metadata struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type Spec struct {
	Servers        []Component `json:"servers"`
	Clients        []Component `json:"clients"`
	Driver         *Component  `json:"driver"`
	ScenariosJSON  string      `json:"scenariosJSON"`
	TimeoutSeconds int32       `json:"timeoutSeconds"`
	TTLSeconds     int32       `json:"ttlSeconds"`
}

// Component is a server, client or driver: its language, and the
// containers that run it. An empty run list asks the controller for its
// default image of that language (for the driver: gRPC's C++ driver).
type Component struct {
	Name     string      `json:"name"`
	Language string      `json:"language"`
	Pool     string      `json:"pool,omitempty"`
	Run      []Container `json:"run"`
}

type Container struct {
	Name    string   `json:"name"`
	Image   string   `json:"image,omitempty"`
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
}

// worker is how to run one implementation's qps worker image: the
// controller sets DRIVER_PORT in every worker container, which Kubernetes
// expands in args.
type worker struct {
	language string // the LoadTest's language label
	image    string
	args     []string
}

var workerArgs = map[string][]string{
	"go":   {"--driver_port=$(DRIVER_PORT)"},
	"lisp": {"-driver_port", "$(DRIVER_PORT)"},
}

type options struct {
	images         map[string]string // implementation -> image reference
	driverImage    string            // empty: the controller's default C++ driver
	prefix         string            // of every LoadTest's name
	pool           string            // node pool of servers and clients, if any
	timeoutSeconds int32
	ttlSeconds     int32
}

// newLoadTest is the LoadTest that runs scenario sc with server and client
// workers of the given implementations.
func newLoadTest(sc *testpb.Scenario, server, client string, o options) (LoadTest, error) {
	// {"scenarios": {...}}, one scenario as an object, not a list: the form
	// gRPC's generator writes, and the only one test-infra's controller
	// reads (it sets scenarios.server_config.port before the driver runs).
	one, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(sc)
	if err != nil {
		return LoadTest{}, err
	}
	scenarios, err := json.Marshal(map[string]json.RawMessage{"scenarios": compactJSON(one)})
	if err != nil {
		return LoadTest{}, err
	}
	component := func(impl string) Component {
		return Component{Name: "0", Language: impl, Pool: o.pool, Run: []Container{{
			Name: "main", Image: o.images[impl], Args: workerArgs[impl],
		}}}
	}
	driver := &Component{Name: "0", Language: "cxx", Run: []Container{}}
	if o.driverImage != "" {
		driver.Run = []Container{{Name: "main", Image: o.driverImage}}
	}
	return LoadTest{
		APIVersion: "e2etest.grpc.io/v1",
		Kind:       "LoadTest",
		Metadata: Metadata{
			Name: resourceName(o.prefix, sc.Name, server+"-server", client+"-client"),
			Labels: map[string]string{
				"prefix": o.prefix, "server": server, "client": client,
			},
			Annotations: map[string]string{"scenario": sc.Name},
		},
		Spec: Spec{
			Servers:        []Component{component(server)},
			Clients:        []Component{component(client)},
			Driver:         driver,
			ScenariosJSON:  string(compactJSON(scenarios)),
			TimeoutSeconds: o.timeoutSeconds,
			TTLSeconds:     o.ttlSeconds,
		},
	}, nil
}

// resourceName joins parts into a Kubernetes name: lower case, '-' for
// anything else, at most 253 characters.
func resourceName(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		for _, r := range strings.ToLower(p) {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
				b.WriteRune(r)
			default:
				b.WriteByte('-')
			}
		}
		b.WriteByte('-')
	}
	name := strings.Trim(b.String(), "-")
	for strings.Contains(name, "--") {
		name = strings.ReplaceAll(name, "--", "-")
	}
	if len(name) > 253 {
		name = strings.TrimRight(name[:253], "-")
	}
	return name
}

func checkImage(impl, ref string) error {
	if ref == "" {
		return fmt.Errorf("-%s_image is required: the image of the %s qps worker, as the cluster pulls it", impl, impl)
	}
	return nil
}
