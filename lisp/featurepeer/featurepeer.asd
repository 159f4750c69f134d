;;;; The Lisp peer of go/features: a clgrpc server whose calls fail, wait
;;;; and carry rich errors as each call's metadata asks, so that grpc-go's
;;;; client can test clgrpc's server side.  The system matches the Bazel
;;;; target lisp_library :featurepeer_lib.

(defsystem "featurepeer"
  :description "A clgrpc server that fails, waits and sends rich errors as each call's metadata asks."
  :license "Apache-2.0"
  :depends-on ("clgrpc" "clgrpc/telemetry" "cmdline")
  :serial t
  :pathname "src/"
  :components ((:file "peer")))
