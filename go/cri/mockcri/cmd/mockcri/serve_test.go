package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/grpcbench/grpcbench/go/cri/mockcri"
)

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-containers", "-1"},
		{"-annotations", "x"},
		{"-containers_per_pod", "0"},
		{"-listen", "tcp://192.0.2.1:80"},
		{"-listen", "relative.sock"},
		{"-shutdown_timeout", "-1s"},
		{"-gogc", "0"},
		{"-codec", "gogo"},
		{"extra"},
	} {
		var stderr strings.Builder
		if code := run(context.Background(), append([]string{"mockcri"}, args...), io.Discard, &stderr); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
		if !strings.Contains(stderr.String(), "usage: mockcri") {
			t.Errorf("%q: no usage:\n%s", args, stderr.String())
		}
	}
}

// The command announces its endpoint, serves the configured inventory and
// stops when its context ends (SIGTERM in main), removing its socket.
func TestServeAnnouncesAndStops(t *testing.T) {
	dir, sock, err := mockcri.SocketDir("m.sock")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdoutR, stdoutW := io.Pipe()
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, []string{"mockcri", "-listen", "unix://" + sock, "-containers", "9", "-annotations", "3"}, stdoutW, io.Discard)
		stdoutW.Close()
	}()
	line, err := bufio.NewReader(stdoutR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if want := "listening on unix://" + sock + "\n"; line != want {
		t.Fatalf("announced %q, want %q", line, want)
	}
	go io.Copy(io.Discard, stdoutR)

	conn, err := mockcri.Dial(mockcri.Endpoint{Network: "unix", Address: sock})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rpcCtx, rpcCancel := context.WithTimeout(ctx, 30*time.Second)
	defer rpcCancel()
	resp, err := runtimeapi.NewRuntimeServiceClient(conn).ListContainers(rpcCtx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Containers) != 9 || len(resp.Containers[0].Annotations) != 3 {
		t.Errorf("%d containers with %d annotations, want 9 with 3", len(resp.Containers), len(resp.Containers[0].Annotations))
	}

	cancel()
	select {
	case code := <-exit:
		if code != exitOK {
			t.Errorf("exit %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("did not stop")
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}
