package mockcri

import (
	"os"
	"testing"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	cripb "github.com/grpcbench/grpcbench/proto/cri"
)

// clients are the three services of a mock server, over one connection.
type clients struct {
	runtime runtimeapi.RuntimeServiceClient
	images  runtimeapi.ImageServiceClient
	chunked cripb.ChunkedRuntimeServiceClient
	debug   cripb.MockRuntimeDebugClient
}

// serve starts a mock server over inv on a real socket of the given network
// ("unix" or "tcp") and connects to it; both end with the test.
func serve(t *testing.T, inv *Inventory, network string) clients {
	t.Helper()
	return serveTuned(t, inv, network, Transport{})
}

// serveTuned is serve with transport tuning tune on both peers.
func serveTuned(t *testing.T, inv *Inventory, network string, tune Transport) clients {
	t.Helper()
	return servePeers(t, inv, network, tune, tune)
}

// servePeers is serve with the server tuned by server and the client by
// client.
func servePeers(t *testing.T, inv *Inventory, network string, server, client Transport) clients {
	t.Helper()
	e := Endpoint{"tcp", "127.0.0.1:0"}
	if network == "unix" {
		dir, sock, err := SocketDir("cri.sock")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		e = Endpoint{"unix", sock}
	}
	lis, bound, err := Listen(e)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(inv, server)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	conn, err := Dial(bound, client.DialOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return newClients(conn)
}

func newClients(conn grpc.ClientConnInterface) clients {
	return clients{
		runtime: runtimeapi.NewRuntimeServiceClient(conn),
		images:  runtimeapi.NewImageServiceClient(conn),
		chunked: cripb.NewChunkedRuntimeServiceClient(conn),
		debug:   cripb.NewMockRuntimeDebugClient(conn),
	}
}
