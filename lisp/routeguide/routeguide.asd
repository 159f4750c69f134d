;;;; The RouteGuide service, client and server on clgrpc, the load
;;;; generator's client, and the interop tests against the Go RouteGuide
;;;; (go/routeguide).  The systems match the Bazel targets of BUILD.bazel:
;;;; "routeguide/proto" is the lisp_proto_library :routeguide_lisp_proto,
;;;; "routeguide" the lisp_library :routeguide, "routeguide/loadgen" the
;;;; lisp_library :loadgen_lib.

(defsystem "routeguide/proto"
  :description "RouteGuide messages and stubs, from the descriptor set of route_guide.proto."
  :license "Apache-2.0"
  :depends-on ("clgrpc")
  :serial t
  :pathname "src/"
  :components ((:static-file "data/routeguide_proto-descriptor-set.proto.bin")
               (:file "proto")))

(defsystem "routeguide"
  :description "RouteGuide on clgrpc: service, feature database, client and server programs."
  :license "Apache-2.0"
  :depends-on ("clgrpc" "clgrpc/health" "clgrpc/reflection" "cmdline" "cmdline/tls" "routeguide/proto")
  :serial t
  :pathname "src/"
  :components ((:static-file "../../../go/routeguide/features/route_guide_db.json")
               (:file "package")
               (:file "json")
               (:file "features")
               (:file "service")
               (:file "server-main")
               (:file "route")
               (:file "client")
               (:file "client-main"))
  :in-order-to ((test-op (test-op "routeguide/tests"))))

(defsystem "routeguide/loadgen"
  :description "The Lisp RouteGuide load generator: clgrpc's calls, driven by the Go load generator."
  :license "Apache-2.0"
  :depends-on ("latency-histogram" "routeguide")
  :serial t
  :pathname "src/"
  :components ((:file "loadgen-ops")
               (:file "loadgen-run")
               (:file "loadgen-agent")))

(defsystem "routeguide/tests"
  :description "Interop tests: Lisp client against the Go server, Go client against the Lisp server."
  :depends-on ("routeguide" "fiveam")
  :serial t
  :pathname "tests/"
  :components ((:file "interop-tests"))
  :perform (test-op (o c) (uiop:symbol-call '#:routeguide.tests '#:run-tests-or-fail)))
