package probes

import (
	"context"
	"flag"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"

	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/internal/runfile"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

var (
	grpcurl    = flag.String("grpcurl", "", "path of the grpcurl command")
	goServer   = flag.String("go_server", "", "path of the Go RouteGuide server")
	lispServer = flag.String("lisp_server", "", "path of the Lisp RouteGuide server")
)

// servers are the implementations under test, by name.
func servers(t *testing.T) map[string]string {
	t.Helper()
	if *goServer == "" || *lispServer == "" {
		t.Fatal("-go_server and -lisp_server are required")
	}
	return map[string]string{"go": *goServer, "lisp": *lispServer}
}

// start runs a server on a free loopback port until the test ends.
func start(t *testing.T, name, path string, args ...string) *serverproc.Process {
	t.Helper()
	argv := append([]string{runfile.Path(path), "-addr", "127.0.0.1:0"}, args...)
	return serverproc.StartForTest(t, name, argv, 60*time.Second, 10*time.Second)
}

// runGrpcurl runs grpcurl against addr without any .proto file, so that
// everything it knows comes from the server's reflection service.
func runGrpcurl(t *testing.T, addr string, args ...string) string {
	t.Helper()
	return runGrpcurlOver(t, []string{"-plaintext"}, addr, args...)
}

// runGrpcurlOver is runGrpcurl with the transport flags transport
// (-plaintext, or -cacert FILE for TLS).
func runGrpcurlOver(t *testing.T, transport []string, addr string, args ...string) string {
	t.Helper()
	if *grpcurl == "" {
		t.Fatal("-grpcurl not given")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	argv := append(append(append([]string{}, transport...), "-max-time", "20"), args...)
	// The address goes before the method, after the flags and -d.
	argv = insertAddr(argv, addr)
	out, err := exec.CommandContext(ctx, runfile.Path(*grpcurl), argv...).CombinedOutput()
	t.Logf("$ grpcurl %s\n%s", strings.Join(argv, " "), out)
	if err != nil {
		t.Fatalf("grpcurl %s: %v", strings.Join(argv, " "), err)
	}
	return string(out)
}

// insertAddr puts addr after the last flag (and its value) of argv.
func insertAddr(argv []string, addr string) []string {
	i := 0
	for i < len(argv) && strings.HasPrefix(argv[i], "-") {
		if argv[i] == "-d" || argv[i] == "-max-time" || argv[i] == "-cacert" {
			i++
		}
		i++
	}
	return append(argv[:i:i], append([]string{addr}, argv[i:]...)...)
}

func TestGrpcurlThroughReflectionAlone(t *testing.T) {
	for name, path := range servers(t) {
		t.Run(name, func(t *testing.T) {
			addr := start(t, name, path).Addr()

			got := strings.Fields(runGrpcurl(t, addr, "list"))
			sort.Strings(got)
			want := []string{
				"grpc.health.v1.Health",
				"grpc.reflection.v1.ServerReflection",
				"grpc.reflection.v1alpha.ServerReflection",
				"routeguide.RouteGuide",
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("grpcurl list = %q, want %q", got, want)
			}

			methods := runGrpcurl(t, addr, "list", "routeguide.RouteGuide")
			for _, m := range []string{"GetFeature", "ListFeatures", "RecordRoute", "RouteChat"} {
				if !strings.Contains(methods, "routeguide.RouteGuide."+m) {
					t.Errorf("grpcurl list routeguide.RouteGuide lacks %s", m)
				}
			}

			desc := runGrpcurl(t, addr, "describe", "routeguide.Feature")
			for _, field := range []string{"string name = 1;", ".routeguide.Point location = 2;"} {
				if !strings.Contains(desc, field) {
					t.Errorf("grpcurl describe routeguide.Feature lacks %q", field)
				}
			}

			feature := runGrpcurl(t, addr, "-d", `{"latitude": 409146138, "longitude": -746188906}`,
				"routeguide.RouteGuide/GetFeature")
			if !strings.Contains(feature, "Berkshire Valley Management Area Trail") {
				t.Errorf("GetFeature through grpcurl = %s, want the Berkshire Valley feature", feature)
			}

			for _, service := range []string{"", "routeguide.RouteGuide"} {
				out := runGrpcurl(t, addr, "-d", fmt.Sprintf(`{"service": %q}`, service), "grpc.health.v1.Health/Check")
				if !strings.Contains(out, `"SERVING"`) {
					t.Errorf("health of %q = %s, want SERVING", service, out)
				}
			}
		})
	}
}

func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// grpcurl speaks reflection v1 (falling back to v1alpha); older tools speak
// only v1alpha, so it is checked on its own.
func TestReflectionV1alphaListsServices(t *testing.T) {
	for name, path := range servers(t) {
		t.Run(name, func(t *testing.T) {
			cc := dial(t, start(t, name, path).Addr())
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			stream, err := reflectionv1alpha.NewServerReflectionClient(cc).ServerReflectionInfo(ctx)
			if err != nil {
				t.Fatal(err)
			}
			req := &reflectionv1alpha.ServerReflectionRequest{
				MessageRequest: &reflectionv1alpha.ServerReflectionRequest_ListServices{},
			}
			if err := stream.Send(req); err != nil {
				t.Fatal(err)
			}
			resp, err := stream.Recv()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range resp.GetListServicesResponse().GetService() {
				got = append(got, s.GetName())
			}
			if !contains(got, "routeguide.RouteGuide") {
				t.Errorf("v1alpha list_services = %q, want routeguide.RouteGuide among them", got)
			}

			req = &reflectionv1alpha.ServerReflectionRequest{
				MessageRequest: &reflectionv1alpha.ServerReflectionRequest_FileContainingSymbol{
					FileContainingSymbol: "routeguide.RouteGuide.GetFeature"},
			}
			if err := stream.Send(req); err != nil {
				t.Fatal(err)
			}
			if resp, err = stream.Recv(); err != nil {
				t.Fatal(err)
			}
			if n := len(resp.GetFileDescriptorResponse().GetFileDescriptorProto()); n == 0 {
				t.Errorf("v1alpha file_containing_symbol routeguide.RouteGuide.GetFeature: %v", resp)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A load balancer or kubelet watching the server must learn that it is going
// away as soon as the graceful shutdown starts, while calls in flight still
// finish: Watch reports NOT_SERVING while a RouteChat stream stays open.
func TestHealthIsNotServingDuringGracefulShutdown(t *testing.T) {
	for name, path := range servers(t) {
		t.Run(name, func(t *testing.T) {
			p := start(t, name, path, "-shutdown_timeout", "20s")
			cc := dial(t, p.Addr())
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			watch, err := healthpb.NewHealthClient(cc).Watch(ctx, &healthpb.HealthCheckRequest{Service: "routeguide.RouteGuide"})
			if err != nil {
				t.Fatal(err)
			}
			if first, err := watch.Recv(); err != nil || first.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				t.Fatalf("first Watch answer = %v, %v; want SERVING", first, err)
			}

			// A call in flight keeps the graceful shutdown going.
			chat, err := pb.NewRouteGuideClient(cc).RouteChat(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := chat.Send(&pb.RouteNote{Message: "still here", Location: &pb.Point{Latitude: 1, Longitude: 1}}); err != nil {
				t.Fatal(err)
			}

			if err := syscall.Kill(p.PID(), syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			next, err := watch.Recv()
			if err != nil || next.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
				t.Fatalf("Watch answer after SIGTERM = %v, %v; want NOT_SERVING", next, err)
			}
			if err := p.ExitedEarly(); err != nil {
				t.Fatalf("the server exited before its calls ended: %v", err)
			}
			// The call in flight still works, then ends the shutdown.
			if err := chat.Send(&pb.RouteNote{Message: "and still", Location: &pb.Point{Latitude: 2, Longitude: 2}}); err != nil {
				t.Errorf("sending on the call in flight during the shutdown: %v", err)
			}
			chat.CloseSend()
			for {
				if _, err := chat.Recv(); err != nil {
					break
				}
			}
		})
	}
}
