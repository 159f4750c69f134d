package image

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/internal/runfile"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
	"github.com/grpcbench/grpcbench/tools/oci/ocilayout"
)

var (
	serverIndex = flag.String("server_index", "", "$(rlocationpath) of the server's oci_image_index")
	runcPath    = flag.String("runc", "", "$(rlocationpath) of the pinned runc executable")
	libseccomp  = flag.String("libseccomp", "", "$(rlocationpath) of the libseccomp.so.2 that the pinned runc links")
)

// lookRunc finds the runc that Bazel pins and passes in, or else (under plain `go test`) the one in
// $PATH or where Debian installs it (/usr/sbin, outside a test's PATH).
func lookRunc() (string, error) {
	if *runcPath != "" {
		return runfile.Path(*runcPath), nil
	}
	if p, err := exec.LookPath("runc"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/runc", "/sbin/runc", "/usr/local/sbin/runc"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("runc is not installed (looked in $PATH, /usr/sbin, /sbin, /usr/local/sbin)")
}

// runcEnv is runc's environment: with the pinned libseccomp, when there is one (Debian's runc links
// it, and the host need not have it); nil, this process's, otherwise.
func runcEnv() []string {
	if *libseccomp == "" {
		return nil
	}
	return append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Dir(runfile.Path(*libseccomp)))
}

// runcCommand runs runc in runcEnv.
func runcCommand(runc string, args ...string) *exec.Cmd {
	cmd := exec.Command(runc, args...)
	cmd.Env = runcEnv()
	return cmd
}

// TestServerImageUnderRunc runs the amd64 server image as a container and calls GetFeature. It
// needs root; without it, it is skipped, and says so. Under Bazel runc is pinned, so a machine
// without runc still runs it.
func TestServerImageUnderRunc(t *testing.T) {
	if *serverIndex == "" {
		t.Skip("needs the Bazel-built image: tools/bazel test //go/routeguide/image:image_test")
	}
	if os.Geteuid() != 0 {
		t.Skipf("SKIPPED: running a container with runc needs root; this test runs as uid %d", os.Geteuid())
	}
	runc, err := lookRunc()
	if err != nil {
		t.Skipf("SKIPPED: %v", err)
	}
	bundle := t.TempDir()
	entrypoint, user := unpackImage(t, runfile.Path(*serverIndex), "amd64", filepath.Join(bundle, "rootfs"))
	// Port 0: the server picks a free port and prints it. The container shares the host's network
	// namespace, so the port is on this machine's loopback.
	args := append(append([]string{}, entrypoint...), "-addr", "127.0.0.1:0")
	writeRuntimeSpec(t, bundle, args, user)

	id := fmt.Sprintf("routeguide-test-%d", os.Getpid())
	state := filepath.Join(bundle, "state")
	// `runc run` passes the container's stdout through and forwards SIGTERM to the server in it,
	// so it is started and stopped like any server process.
	server, err := serverproc.Start(context.Background(), serverproc.Spec{
		Argv:         []string{runc, "--root", state, "run", "--bundle", bundle, id},
		Env:          runcEnv(),
		ReadyTimeout: 30 * time.Second,
		StopGrace:    10 * time.Second,
		Log:          serverproc.TestLog(t, "container"),
		Check:        serverproc.CheckLoopback,
	})
	if err != nil {
		runcCommand(runc, "--root", state, "delete", "--force", id).Run()
		t.Fatalf("starting the container: %v", err)
	}
	t.Cleanup(func() {
		server.Stop()
		runcCommand(runc, "--root", state, "delete", "--force", id).Run()
	})
	addr := server.Addr()
	t.Logf("the container serves on %s", addr)

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, err := pb.NewRouteGuideClient(conn).GetFeature(ctx, &pb.Point{Latitude: 409146138, Longitude: -746188906})
	if err != nil {
		t.Fatalf("GetFeature: %v", err)
	}
	if !strings.Contains(f.GetName(), "Berkshire Valley") {
		t.Errorf("GetFeature returned %q, want the Berkshire Valley feature", f.GetName())
	}
}

// writeRuntimeSpec writes a minimal OCI runtime config.json: a read-only root, the usual /proc and
// /dev, no capabilities, and new namespaces for everything except the network.
func writeRuntimeSpec(t *testing.T, bundle string, args []string, user [2]int) {
	t.Helper()
	spec := map[string]any{
		"ociVersion": "1.0.2",
		"process": map[string]any{
			"args":            args,
			"cwd":             "/",
			"env":             []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
			"user":            map[string]int{"uid": user[0], "gid": user[1]},
			"noNewPrivileges": true,
			"rlimits":         []map[string]any{{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}},
		},
		"root":     map[string]any{"path": "rootfs", "readonly": true},
		"hostname": "routeguide",
		"mounts": []map[string]any{
			{"destination": "/proc", "type": "proc", "source": "proc"},
			{"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		},
		"linux": map[string]any{
			"namespaces": []map[string]string{{"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}},
		},
	}
	b, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bundle, "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// unpackImage extracts the image for arch from the index layout into rootfs and returns its
// entrypoint and numeric user and group.
func unpackImage(t *testing.T, layout, arch, rootfs string) (entrypoint []string, user [2]int) {
	t.Helper()
	root, err := ocilayout.Read(layout)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if root.Index == nil {
		t.Fatalf("%s holds a single image, want an index", layout)
	}
	m, err := root.Index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range m.Manifests {
		if d.Platform == nil || d.Platform.Architecture != arch {
			continue
		}
		img, err := root.Index.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Sscanf(cf.Config.User, "%d:%d", &user[0], &user[1]); err != nil {
			t.Fatalf("user %q is not UID:GID", cf.Config.User)
		}
		if err := ocilayout.Extract(img, rootfs); err != nil {
			t.Fatal(err)
		}
		return cf.Config.Entrypoint, user
	}
	t.Fatalf("%s has no %s image", layout, arch)
	return nil, user
}
