package inprocgrpc_test

import (
	"context"
	"io"
	"reflect"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	gt "github.com/grpcbench/grpcbench/go/inprocgrpc/internal/testpb"
)

func md(kv ...string) metadata.MD { return metadata.Pairs(kv...) }

func wantMD(t *testing.T, what string, got, want metadata.MD) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func TestUnaryHeaderTrailer(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			ctx := testContext(t)
			cli := newClient(t, &testServer{
				unary: func(ctx context.Context, m *gt.Message) (*gt.Message, error) {
					if err := grpc.SetHeader(ctx, md("h1", "a")); err != nil {
						return nil, err
					}
					if err := grpc.SendHeader(ctx, md("h2", "b")); err != nil {
						return nil, err
					}
					if err := grpc.SetHeader(ctx, md("late", "x")); err == nil {
						t.Error("SetHeader after SendHeader succeeded")
					}
					if err := grpc.SetTrailer(ctx, md("t1", "c")); err != nil {
						return nil, err
					}
					grpc.SetTrailer(ctx, md("t1", "d"))
					if m.Code != 0 {
						return nil, statusFromCode(m.Code)
					}
					return &gt.Message{}, nil
				},
			}, mode.opts...)
			for _, code := range []codes.Code{codes.OK, codes.PermissionDenied} {
				var header, trailer metadata.MD
				var p peer.Peer
				_, err := cli.Unary(ctx, &gt.Message{Code: int32(code)}, grpc.Header(&header), grpc.Trailer(&trailer), grpc.Peer(&p))
				if code == codes.OK && err != nil {
					t.Fatal(err)
				}
				if code != codes.OK {
					wantCode(t, err, code)
				}
				// Metadata arrives with errors too, as over the wire.
				wantMD(t, "header", header, md("h1", "a", "h2", "b"))
				wantMD(t, "trailer", trailer, md("t1", "c", "t1", "d"))
				if p.Addr == nil || p.Addr.Network() != "inproc" {
					t.Fatalf("peer = %v", p)
				}
			}
		})
	}
}

func TestStreamHeaderTrailer(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			ctx := testContext(t)
			cli := newClient(t, &testServer{
				serverStream: func(m *gt.Message, st gt.TestService_ServerStreamServer) error {
					st.SetHeader(md("h1", "a"))
					if m.Count > 0 {
						// grpc.SendHeader through the context reaches the stream.
						if err := grpc.SendHeader(st.Context(), md("h2", "b")); err != nil {
							return err
						}
						if err := st.SetHeader(md("late", "x")); err == nil {
							t.Error("SetHeader after SendHeader succeeded")
						}
					}
					for range m.Count {
						if err := st.Send(&gt.Message{}); err != nil {
							return err
						}
					}
					st.SetTrailer(md("t1", "c"))
					grpc.SetTrailer(st.Context(), md("t2", "d"))
					if m.Code != 0 {
						return statusFromCode(m.Code)
					}
					return nil
				},
			}, mode.opts...)

			for _, tc := range []struct {
				name       string
				count      int32
				code       codes.Code
				wantHeader metadata.MD
			}{
				{"messages", 3, codes.OK, md("h1", "a", "h2", "b")},
				// A handler that sends nothing still delivers its header.
				{"trailers only", 0, codes.OK, md("h1", "a")},
				{"error", 0, codes.Unavailable, md("h1", "a")},
			} {
				t.Run(tc.name, func(t *testing.T) {
					var optHeader, optTrailer metadata.MD
					st, err := cli.ServerStream(ctx, &gt.Message{Count: tc.count, Code: int32(tc.code)},
						grpc.Header(&optHeader), grpc.Trailer(&optTrailer))
					if err != nil {
						t.Fatal(err)
					}
					h, err := st.Header()
					if err != nil {
						t.Fatal(err)
					}
					wantMD(t, "Header()", h, tc.wantHeader)
					n := int32(0)
					for {
						_, err = st.Recv()
						if err != nil {
							break
						}
						n++
					}
					if n != tc.count {
						t.Fatalf("got %d messages, want %d", n, tc.count)
					}
					if tc.code == codes.OK && err != io.EOF {
						t.Fatalf("end = %v, want io.EOF", err)
					} else if tc.code != codes.OK {
						wantCode(t, err, tc.code)
					}
					wantMD(t, "Trailer()", st.Trailer(), md("t1", "c", "t2", "d"))
					wantMD(t, "grpc.Header option", optHeader, tc.wantHeader)
					wantMD(t, "grpc.Trailer option", optTrailer, md("t1", "c", "t2", "d"))
				})
			}
		})
	}
}

// TestContextValuesDoNotLeak: the server's context carries the client's
// metadata, deadline and cancellation, and none of its values.
func TestContextValuesDoNotLeak(t *testing.T) {
	type key struct{}
	check := func(t *testing.T, ctx context.Context, method string) {
		t.Helper()
		if v := ctx.Value(key{}); v != nil {
			t.Errorf("the server sees the client's context value %v", v)
		}
		in, ok := metadata.FromIncomingContext(ctx)
		if !ok || len(in["x-user"]) != 1 || in["x-user"][0] != "alice" {
			t.Errorf("incoming metadata = %v", in)
		}
		if _, ok := metadata.FromOutgoingContext(ctx); ok {
			t.Error("the client's outgoing metadata is outgoing on the server too")
		}
		if p, ok := peer.FromContext(ctx); !ok || p.Addr.String() != "inproc" {
			t.Errorf("peer = %v, %v", p, ok)
		}
		if m, ok := grpc.Method(ctx); !ok || m != method {
			t.Errorf("grpc.Method = %q, %v", m, ok)
		}
		if _, ok := ctx.Deadline(); !ok {
			t.Error("the client's deadline did not reach the server")
		}
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.WithValue(testContext(t), key{}, "secret")
			ctx = metadata.AppendToOutgoingContext(ctx, "x-user", "alice")
			cli := newClient(t, &testServer{
				unary: func(ctx context.Context, _ *gt.Message) (*gt.Message, error) {
					check(t, ctx, "/inprocgrpctest.TestService/Unary")
					// Contexts derived on the server keep working.
					dctx, cancel := context.WithCancel(context.WithValue(ctx, key{}, "server's own"))
					defer cancel()
					check(t, context.WithValue(dctx, key{}, nil), "/inprocgrpctest.TestService/Unary")
					return &gt.Message{}, nil
				},
				bidi: func(st gt.TestService_BidiStreamServer) error {
					check(t, st.Context(), "/inprocgrpctest.TestService/BidiStream")
					return nil
				},
			}, mode.opts...)
			if _, err := cli.Unary(ctx, &gt.Message{}); err != nil {
				t.Fatal(err)
			}
			st, err := cli.BidiStream(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Recv(); err != io.EOF {
				t.Fatalf("end = %v", err)
			}
		})
	}
}

// TestPerRPCCredentials: credentials given as a call option reach the
// server as metadata.
func TestPerRPCCredentials(t *testing.T) {
	ctx := testContext(t)
	cli := newClient(t, &testServer{
		unary: func(ctx context.Context, _ *gt.Message) (*gt.Message, error) {
			in, _ := metadata.FromIncomingContext(ctx)
			return &gt.Message{Payload: []byte(in["authorization"][0])}, nil
		},
	})
	resp, err := cli.Unary(ctx, &gt.Message{}, grpc.PerRPCCredentials(tokenCreds("Bearer t")))
	if err != nil || string(resp.Payload) != "Bearer t" {
		t.Fatalf("Unary = %v, %v", resp, err)
	}
}

type tokenCreds string

func (c tokenCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": string(c)}, nil
}

func (tokenCreds) RequireTransportSecurity() bool { return true }
