;;;; clgrpc's qps worker for gRPC's benchmark protocol.  The systems match
;;;; the Bazel targets of BUILD.bazel: "qps/proto" is the lisp_proto_library
;;;; :qps_lisp_proto, "qps" the lisp_library :qps.

(defsystem "qps/proto"
  :description "grpc.testing WorkerService and BenchmarkService messages and stubs, from the descriptor set."
  :license "Apache-2.0"
  :depends-on ("clgrpc")
  :pathname "src/"
  :serial t
  :components ((:static-file "data/qps_lisp_proto-descriptor-set.proto.bin")
               (:file "proto")))

(defsystem "qps"
  :description "A qps worker on clgrpc: grpc.testing.WorkerService and BenchmarkService."
  :license "Apache-2.0"
  :depends-on ("clgrpc" "cmdline" "cpus" "latency-histogram" "qps/proto")
  :serial t
  :pathname "src/"
  :components ((:file "package")
               (:file "usage")
               (:file "config-check")
               (:file "benchmark-service")
               (:file "benchmark-server")
               (:file "benchmark-client")
               (:file "worker-service")
               (:file "worker-main")))
