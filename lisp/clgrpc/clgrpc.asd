;;;; ASDF definition for clgrpc, a pure Common Lisp gRPC implementation.
;;;;
;;;; Files are listed in load order. BUILD.bazel lists the same files in the
;;;; same order, and the build checks that the two lists agree.

(defsystem "clgrpc"
  :description "Pure Common Lisp gRPC: HTTP/2, HPACK and protobuf wire format."
  :license "Apache-2.0"
  :depends-on ("chipz" "salza2")
  :serial t
  :pathname "src/"
  :components ((:file "package")
               (:file "octets")
               (:file "utf8")
               (:module "util"
                :serial t
                :components ((:file "clock")
                             (:file "fifo")
                             (:file "cpus")
                             (:file "log")
                             (:file "json")
                             (:file "executor")
                             (:file "executor-monitor")
                             (:file "executor-turns")
                             (:file "executor-workers")
                             (:file "heap-guard")
                             (:file "scheduler")))
               (:module "net"
                :serial t
                :components ((:file "socket")
                             (:file "resolve")
                             (:file "epoll")))
               (:module "tls"
                :serial t
                :components ((:file "openssl")
                             (:file "context")
                             (:file "peer")
                             (:file "session")))
               (:module "hpack"
                :serial t
                :components ((:file "errors")
                             (:file "integer")
                             (:file "huffman-codes")
                             (:file "huffman")
                             (:file "static-table")
                             (:file "dynamic-table")
                             (:file "decoder")
                             (:file "encoder")))
               (:module "protobuf"
                :serial t
                :components ((:file "errors")
                             (:file "encode")
                             (:file "decode")
                             (:file "message")))
               (:module "http2"
                :serial t
                :components ((:file "errors")
                             (:file "constants")
                             (:file "frame-header")
                             (:file "settings")
                             (:file "frame-encode")
                             (:file "frame-decode")
                             (:file "stream")
                             (:file "connection")
                             (:file "budget")
                             (:file "semantics")
                             (:file "output")
                             (:file "input")
                             (:file "reactor")
                             (:file "reactor-turn")
                             (:file "reactor-loop")
                             (:file "tls-io")
                             (:file "lifecycle")))
               (:module "grpc"
                :serial t
                :components ((:file "status")
                             (:file "timeout")
                             (:file "metadata")
                             (:file "status-details")
                             (:file "compression")
                             (:file "service-config")
                             (:file "call")
                             (:file "framing")
                             (:file "call-ops")
                             (:file "interceptors")
                             (:file "plain-http")
                             (:file "server")
                             (:file "respond")
                             (:file "dispatch")
                             (:file "each-message")
                             (:file "server-calls")
                             (:file "server-lifecycle")
                             (:file "heap-report")
                             (:file "retry")
                             (:file "channel")
                             (:file "client-callbacks")
                             (:file "client")
                             (:file "target")
                             (:file "balancer")
                             (:file "resolver")
                             (:file "hedging")))
               (:module "descriptor"
                :serial t
                :components ((:file "model")
                             (:file "reader")))
               (:module "codegen"
                :serial t
                :components ((:file "names")
                             (:file "messages")
                             (:file "services"))))
  :in-order-to ((test-op (test-op "clgrpc/tests"))))

(defsystem "clgrpc/health/proto"
  :description "grpc.health.v1 messages and stubs, from the descriptor set of health.proto."
  :license "Apache-2.0"
  :depends-on ("clgrpc")
  :serial t
  :pathname "health/"
  :components ((:static-file "data/health_proto-descriptor-set.proto.bin")
               (:file "proto")))

(defsystem "clgrpc/health"
  :description "The standard gRPC health service (grpc.health.v1.Health) for clgrpc servers."
  :license "Apache-2.0"
  :depends-on ("clgrpc" "clgrpc/health/proto")
  :pathname "health/"
  :components ((:file "health")))

(defsystem "clgrpc/telemetry"
  :description "gRPC's OpenTelemetry metrics (gRFC A66) with a Prometheus scrape endpoint, and W3C
trace context, for clgrpc servers and channels, through interceptors."
  :license "Apache-2.0"
  :depends-on ("clgrpc" (:require "sb-bsd-sockets"))
  :serial t
  :pathname "telemetry/"
  :components ((:file "metrics")
               (:file "grpc-metrics")
               (:file "prometheus")
               (:file "tracing")))

(defsystem "clgrpc/reflection/proto"
  :description "grpc.reflection.v1 and v1alpha messages and stubs, from the descriptor sets of reflection.proto."
  :license "Apache-2.0"
  :depends-on ("clgrpc")
  :serial t
  :pathname "reflection/"
  :components ((:static-file "data/reflection_v1_proto-descriptor-set.proto.bin")
               (:static-file "data/reflection_v1alpha_proto-descriptor-set.proto.bin")
               (:file "proto-v1")
               (:file "proto-v1alpha")))

(defsystem "clgrpc/reflection"
  :description "gRPC server reflection (grpc.reflection.v1 and v1alpha) for clgrpc servers."
  :license "Apache-2.0"
  :depends-on ("clgrpc" "clgrpc/reflection/proto")
  :pathname "reflection/"
  :components ((:file "reflection")))

(defsystem "clgrpc/tls-tests"
  :description "FiveAM tests of clgrpc's TLS; CLGRPC_TEST_CREDENTIALS names the directory of the
test credentials (//tools/testcerts), and the dynamic linker must find libssl.so.3."
  :depends-on ("clgrpc" "fiveam")
  :pathname "tests/"
  :components ((:file "tls-tests"))
  :perform (test-op (o c) (uiop:symbol-call '#:clgrpc.tls-tests '#:run-tests-or-fail)))

(defsystem "clgrpc/tests"
  :description "FiveAM tests for clgrpc."
  :depends-on ("clgrpc" "clgrpc/telemetry" "fiveam")
  :serial t
  :pathname "tests/"
  :components ((:file "package")
               (:file "octets-tests")
               (:file "hpack-tests")
               (:file "protobuf-tests")
               (:file "http2-tests")
               ;; Fixtures are read at compile time by descriptor-tests.
               (:static-file "data/route_guide.pb")
               (:static-file "data/test_types.pb")
               (:file "descriptor-tests")
               (:file "h2-peer")
               (:file "connection-tests")
               (:file "limits-tests")
               (:file "grpc-tests")
               (:file "flow-control-tests")
               (:file "execution-tests")
               (:file "memory-tests")
               (:file "each-message-tests")
               (:file "compression-tests")
               (:file "retry-tests")
               (:file "keepalive-tests")
               (:file "interceptor-tests")
               (:file "status-details-tests")
               (:file "balancer-tests")
               (:file "plain-http-tests")
               (:file "generated")
               (:static-file "data/messages/clgrpc.test.Everything.full.bin")
               (:static-file "data/messages/clgrpc.test.Everything.sparse.bin")
               (:static-file "data/messages/routeguide.Feature.named.bin")
               (:static-file "data/messages/routeguide.Point.basic.bin")
               (:static-file "data/messages/routeguide.Point.zero.bin")
               (:static-file "data/messages/routeguide.Rectangle.area.bin")
               (:static-file "data/messages/routeguide.RouteNote.unicode.bin")
               (:static-file "data/messages/routeguide.RouteSummary.full.bin")
               (:file "codegen-tests")
               (:file "run"))
  :perform (test-op (o c) (uiop:symbol-call '#:clgrpc.tests '#:run-tests-or-fail)))

(defsystem "clgrpc/fuzz"
  :description "Coverage-guided fuzzing of clgrpc's decoders (sb-cover marks for
feedback); fuzz/README.md says how to run it."
  :depends-on ("clgrpc" (:require "sb-cover"))
  :serial t
  :pathname "fuzz/"
  :components ((:file "package")
               (:file "coverage")
               (:file "mutate")
               (:file "target")
               (:file "corpus")
               (:file "deadline")
               (:file "execute")
               (:file "minimize")
               (:file "engine")
               (:file "invariant")
               (:static-file "../tests/data/test_types.pb")
               (:file "messages")
               (:module "targets"
                :serial t
                :components ((:file "http2-frame")
                             (:file "hpack")
                             (:file "protobuf")
                             (:file "gzip")
                             (:file "grpc-framing")
                             (:file "tls")
                             (:file "tls-records")))
               (:file "seeds")
               (:file "main")))
