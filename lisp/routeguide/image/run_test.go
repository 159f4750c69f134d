package image

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/internal/runfile"
	"github.com/grpcbench/grpcbench/internal/tlstest"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

var (
	qemu           = flag.String("qemu", "", "$(rlocationpath) of qemu-aarch64-static")
	tlsCredentials = flag.String("tls_credentials", "", "$(rlocationpath) of ca.pem of //tools/testcerts:credentials")
	libssl         = flag.String("libssl", "", "$(rlocationpath) of the pinned libssl.so.3 (tlstest wants it; the chrooted server loads the image's)")
)

// TestAmd64ServerRunsChrooted runs the amd64 image's entrypoint chrooted into the image's unpacked
// file system, as the image's user, and calls GetFeature. Inside the chroot nothing of this
// machine is visible, so the server can only start if the image carries its loader and every
// library it loads. The chroot is made in a new user namespace, so the test needs neither root nor
// runc; the network namespace is this machine's, so the server listens on its loopback.
//
// (Running the image's loader directly, `ROOT/lib64/ld-linux-x86-64.so.2 ROOT/usr/local/bin/server`,
// does not work: SBCL finds the core saved inside its executable through /proc/self/exe, which is
// then the loader. In a chroot without /proc it falls back to argv[0].)
func TestAmd64ServerRunsChrooted(t *testing.T) {
	addr := startChrooted(t, unpackImage(t, "amd64"))
	t.Logf("the chrooted amd64 server serves on %s", addr)
	checkGetFeature(t, addr, insecure.NewCredentials())
}

// TestAmd64ServerServesTLSChrooted: the same over TLS, with the test credentials copied into the
// image's file system; the server can only load OpenSSL from the image.
func TestAmd64ServerServesTLSChrooted(t *testing.T) {
	setup, err := tlstest.New(*tlsCredentials, *libssl)
	if err != nil {
		t.Fatal(err)
	}
	img := unpackImage(t, "amd64")
	dir := filepath.Join(img.root, "credentials")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"server.pem", "server.key"} {
		data, err := os.ReadFile(setup.File(f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	addr := startChrooted(t, img, "-tls", "-cert_file", "/credentials/server.pem", "-key_file", "/credentials/server.key")
	config, err := setup.ClientConfig("")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the chrooted amd64 server serves TLS on %s", addr)
	checkGetFeature(t, addr, credentials.NewTLS(config))
}

// startChrooted starts the image's entrypoint with extra arguments, chrooted into the image's file
// system as its user, and returns the address it serves on.
func startChrooted(t *testing.T, img unpacked, extra ...string) string {
	t.Helper()
	var uid, gid int
	if _, err := fmt.Sscanf(img.config.Config.User, "%d:%d", &uid, &gid); err != nil {
		t.Fatalf("user %q is not UID:GID", img.config.Config.User)
	}
	args := append(append(append([]string{}, img.entrypoint...), "-addr", "127.0.0.1:0"), extra...)
	start := func(userns bool) (*serverproc.Process, error) {
		return serverproc.Start(context.Background(), serverproc.Spec{
			Argv:         args,
			Env:          img.config.Config.Env,
			ReadyTimeout: 30 * time.Second,
			StopGrace:    10 * time.Second,
			Log:          serverproc.TestLog(t, "amd64 server"),
			Check:        serverproc.CheckLoopback,
			Prepare: func(cmd *exec.Cmd) {
				cmd.Dir = "/"
				attr := cmd.SysProcAttr
				attr.Chroot = img.root
				attr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}
				if userns {
					// The image's user is this test's user outside; inside, the namespace grants
					// the capability to chroot before the process drops to that user.
					attr.Cloneflags = syscall.CLONE_NEWUSER
					attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: os.Getuid(), Size: 1}}
					attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: os.Getgid(), Size: 1}}
				}
			},
		})
	}
	server, err := start(true)
	// A failure to create the process carries the kernel's errno; one to announce does not.
	var errno syscall.Errno
	if err != nil && errors.As(err, &errno) {
		// User namespaces can be disabled (user.max_user_namespaces=0, or a security module);
		// root can chroot without one.
		if os.Geteuid() != 0 {
			t.Skipf("SKIPPED: chrooting into the image needs a user namespace or root; creating one failed: %v", err)
		}
		t.Logf("no user namespace (%v); chrooting as root", err)
		server, err = start(false)
	}
	if err != nil {
		t.Fatalf("chroot into the image: %v", err)
	}
	t.Cleanup(func() { server.Stop() })
	return server.Addr()
}

// TestArm64ServerRunsUnderQemu runs the arm64 image's entrypoint under qemu-user with the image's
// unpacked file system as the sysroot (-L), so that the aarch64 loader and libraries come from the
// image (this machine has none; TestImagesCarryTheirLibraries checks the image holds them all),
// and calls GetFeature.
func TestArm64ServerRunsUnderQemu(t *testing.T) {
	if *qemu == "" {
		t.Skip("needs qemu-aarch64-static: tools/bazel test //lisp/routeguide/image:image_test")
	}
	img := unpackImage(t, "arm64")
	exe, err := inRoot(img.root, img.entrypoint[0])
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-L", img.root, exe}, img.entrypoint[1:]...)
	// Emulated, SBCL takes a few seconds to map and start its 40 MB heap.
	server := serverproc.StartForTestIn(t, "arm64 server", img.config.Config.Env,
		append(append([]string{runfile.Path(*qemu)}, args...), "-addr", "127.0.0.1:0"),
		90*time.Second, 10*time.Second)
	addr := server.Addr()
	t.Logf("the arm64 server under qemu serves on %s", addr)
	checkGetFeature(t, addr, insecure.NewCredentials())
}

// checkGetFeature asks the server at addr for a known feature of the Go server's database.
func checkGetFeature(t *testing.T, addr string, creds credentials.TransportCredentials) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
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
