package image

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/internal/runfile"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

var qemu = flag.String("qemu", "", "$(rlocationpath) of qemu-aarch64-static")

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
	img := unpackImage(t, "amd64")
	var uid, gid int
	if _, err := fmt.Sscanf(img.config.Config.User, "%d:%d", &uid, &gid); err != nil {
		t.Fatalf("user %q is not UID:GID", img.config.Config.User)
	}
	args := append(append([]string{}, img.entrypoint...), "-addr", "127.0.0.1:0")
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
	addr := server.Addr()
	t.Logf("the chrooted amd64 server serves on %s", addr)
	checkGetFeature(t, addr)
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
	checkGetFeature(t, addr)
}

// checkGetFeature asks the server at addr for a known feature of the Go server's database.
func checkGetFeature(t *testing.T, addr string) {
	t.Helper()
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
