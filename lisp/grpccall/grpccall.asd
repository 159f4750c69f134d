;;;; grpccall: one gRPC method called from the command line with clgrpc's
;;;; client.  The system matches the Bazel target lisp_library :grpccall.

(defsystem "grpccall"
  :description "Calls a gRPC method with clgrpc's client: service config, deadlines, wait-for-ready, metadata."
  :license "Apache-2.0"
  :depends-on ("clgrpc" "clgrpc/telemetry" "cmdline")
  :serial t
  :pathname "src/"
  :components ((:file "package")
               (:file "main")))
