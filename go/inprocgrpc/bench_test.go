package inprocgrpc_test

import (
	"context"
	"io"
	"testing"

	grpchan "github.com/fullstorydev/grpchan/inprocgrpc"
	"google.golang.org/grpc"

	"github.com/grpcbench/grpcbench/go/inprocgrpc"
	"github.com/grpcbench/grpcbench/go/inprocgrpc/internal/echoservice"
	pb "github.com/grpcbench/grpcbench/proto/echo"
)

// The benchmarks compare this channel with grpchan's on the tournament's
// workloads, for quick checks with `go test -bench`; the tournament
// (./tournament) is the full comparison.

type channelUnderTest interface {
	grpc.ClientConnInterface
	grpc.ServiceRegistrar
}

func benchChannels() []struct {
	name string
	ch   channelUnderTest
} {
	return []struct {
		name string
		ch   channelUnderTest
	}{
		{"ours", inprocgrpc.New()},
		{"ours-merge", inprocgrpc.New(inprocgrpc.WithoutGeneratedClones())},
		{"ours-detached", inprocgrpc.New(inprocgrpc.WithDetachedUnary())},
		{"grpchan", &grpchan.Channel{}},
	}
}

func BenchmarkUnary(b *testing.B) {
	for _, c := range benchChannels() {
		pb.RegisterEchoServer(c.ch, echoservice.Server{})
		cli := pb.NewEchoClient(c.ch)
		req := &pb.EchoRequest{Payload: make([]byte, 32)}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				if _, err := cli.Echo(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkUnaryLarge is the tournament's large unary rows, for profiles:
// go test -bench 'UnaryLarge/1MiB' -cpuprofile cpu.out -memprofile mem.out
func BenchmarkUnaryLarge(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"100KiB", 100 << 10}, {"1MiB", 1 << 20}} {
		b.Run(size.name, func(b *testing.B) {
			for _, c := range benchChannels() {
				pb.RegisterEchoServer(c.ch, echoservice.Server{})
				cli := pb.NewEchoClient(c.ch)
				req := &pb.EchoRequest{Payload: make([]byte, size.bytes)}
				b.Run(c.name, func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(int64(size.bytes))
					ctx := context.Background()
					for b.Loop() {
						if _, err := cli.Echo(ctx, req); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

func BenchmarkServerStream(b *testing.B) {
	for _, c := range benchChannels() {
		pb.RegisterEchoServer(c.ch, echoservice.Server{})
		cli := pb.NewEchoClient(c.ch)
		req := &pb.StreamRequest{Count: 100, PayloadSize: 32}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				st, err := cli.ServerStream(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					if _, err := st.Recv(); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != 100 {
					b.Fatalf("got %d messages", n)
				}
			}
		})
	}
}

func BenchmarkBidi(b *testing.B) {
	for _, c := range benchChannels() {
		pb.RegisterEchoServer(c.ch, echoservice.Server{})
		cli := pb.NewEchoClient(c.ch)
		req := &pb.EchoRequest{Payload: make([]byte, 32)}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			st, err := cli.Bidi(ctx)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := st.Send(req); err != nil {
					b.Fatal(err)
				}
				if _, err := st.Recv(); err != nil {
					b.Fatal(err)
				}
			}
			st.CloseSend()
			if _, err := st.Recv(); err != io.EOF {
				b.Fatal(err)
			}
		})
	}
}

func BenchmarkUnaryParallel(b *testing.B) {
	for _, c := range benchChannels() {
		pb.RegisterEchoServer(c.ch, echoservice.Server{})
		cli := pb.NewEchoClient(c.ch)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(50)
			b.RunParallel(func(pb_ *testing.PB) {
				req := &pb.EchoRequest{Payload: make([]byte, 32)}
				ctx := context.Background()
				for pb_.Next() {
					if _, err := cli.Echo(ctx, req); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
