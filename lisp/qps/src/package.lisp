;;;; The package of clgrpc's qps worker: gRPC's benchmark protocol
;;;; (grpc.testing.WorkerService driving grpc.testing.BenchmarkService), so
;;;; that gRPC's drivers, and grpc/test-infra's LoadTest, can run clgrpc as a
;;;; benchmark server or client beside any other language's worker.  The
;;;; generated protocol code is in QPS.PROTO, defined by the
;;;; lisp_proto_library //lisp/qps:qps_lisp_proto under Bazel and by
;;;; proto.lisp under ASDF.

(defpackage #:qps
  (:use #:cl #:cmdline #:cpus #:latency-histogram #:qps.proto)
  (:documentation "A qps worker on clgrpc: WorkerService and BenchmarkService.")
  (:export #:worker-main #:start-worker #:stop-worker
           #:histogram-data
           #:register-benchmark-handlers #:check-client-config #:check-server-config))
