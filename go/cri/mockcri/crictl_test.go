package mockcri

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/grpcbench/grpcbench/internal/runfile"
)

var crictlFlag = flag.String("crictl", "", "path to a crictl binary (sigs.k8s.io/cri-tools); default $CRICTL, else `go tool -n crictl`")

// crictlBinary is the crictl to drive the mock server with. Under Bazel it is
// the one the build made from the sigs.k8s.io/cri-tools Go module
// ($CRICTL, an rlocationpath into the test's runfiles), and the test never
// skips. Under `go test` it is -crictl, $CRICTL, or go.mod's tool directive:
// `go tool -n crictl` builds it (once, into Go's build cache) and prints its path.
func crictlBinary(t *testing.T) string {
	t.Helper()
	if *crictlFlag != "" {
		return *crictlFlag
	}
	env := os.Getenv("CRICTL") // read here, so go test's cache keys on it
	if runfile.UnderBazel() {
		if env == "" {
			t.Fatal("under Bazel, CRICTL must name crictl's runfile (the test target's env)")
		}
		return runfile.Path(env)
	}
	if env != "" {
		return env
	}
	out, err := exec.Command("go", "tool", "-n", "crictl").Output()
	if err != nil {
		t.Skipf("no crictl: `go tool -n crictl` failed (%v); set CRICTL=/path/to/crictl or pass -crictl=PATH", err)
	}
	return strings.TrimSpace(string(out))
}

// TestCrictl drives the mock server with crictl, a real CRI client, over a
// unix socket, as kubelet's operators would.
func TestCrictl(t *testing.T) {
	crictlPath := crictlBinary(t)
	inv := MustGenerate(DefaultConfig(10))
	dir, sock, err := SocketDir("cri.sock")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	srv, err := Start(inv, Endpoint{"unix", sock})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()

	crictl := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		endpoint := srv.Endpoint.String()
		cmd := exec.CommandContext(ctx, crictlPath, append([]string{
			"--runtime-endpoint", endpoint, "--image-endpoint", endpoint, "--timeout", "10s",
			// No config file: a machine's /etc/crictl.yaml must not redirect it.
			"--config", os.DevNull,
		}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("crictl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return string(out)
	}
	lines := func(s string) []string { return strings.Fields(s) }

	if out := crictl("version"); !strings.Contains(out, "RuntimeName:  "+RuntimeName) {
		t.Errorf("crictl version:\n%s", out)
	}
	if got := lines(crictl("ps", "-a", "-q", "--no-trunc")); len(got) != len(inv.Containers) {
		t.Errorf("crictl ps -a lists %d containers, want %d", len(got), len(inv.Containers))
	}
	running := len(inv.ListContainers(&runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}}))
	if got := lines(crictl("ps", "-q")); len(got) != running {
		t.Errorf("crictl ps lists %d running containers, want %d", len(got), running)
	}
	if got := lines(crictl("pods", "-q")); len(got) != len(inv.Pods) {
		t.Errorf("crictl pods lists %d pods, want %d", len(got), len(inv.Pods))
	}
	c := inv.Containers[4]
	if got := lines(crictl("ps", "-a", "-q", "--no-trunc", "--label", labelContainerName+"="+c.Metadata.Name, "--pod", c.PodSandboxId[:13])); len(got) != 1 || got[0] != c.Id {
		t.Errorf("crictl ps --label --pod: %v, want [%s]", got, c.Id)
	}

	var inspect struct {
		Status struct {
			ID       string `json:"id"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"status"`
		Info map[string]any `json:"info"`
	}
	if err := json.Unmarshal([]byte(crictl("inspect", c.Id[:13])), &inspect); err != nil {
		t.Fatal(err)
	}
	if inspect.Status.ID != c.Id || inspect.Status.Metadata.Name != c.Metadata.Name || inspect.Info["sandboxID"] != c.PodSandboxId {
		t.Errorf("crictl inspect: %+v", inspect)
	}
}
