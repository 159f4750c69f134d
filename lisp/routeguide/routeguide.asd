;;;; The RouteGuide service, server, client and load generator on clgrpc,
;;;; and the interop tests against the Go RouteGuide (go/routeguide), each a
;;;; system of its own, so that a program carries only what it runs.  The
;;;; systems match the Bazel targets of BUILD.bazel: "routeguide/proto" is
;;;; the lisp_proto_library :routeguide_lisp_proto, "routeguide" the
;;;; lisp_library :routeguide (the service), "routeguide/server" :server_lib,
;;;; "routeguide/client" :client_lib (the calls), "routeguide/client-main"
;;;; :client_main_lib (the client program) and "routeguide/loadgen" :loadgen_lib.

(defsystem "routeguide/proto"
  :description "RouteGuide messages and stubs, from the descriptor set of route_guide.proto."
  :license "Apache-2.0"
  :depends-on ("clgrpc")
  :serial t
  :pathname "src/"
  :components ((:static-file "data/routeguide_proto-descriptor-set.proto.bin")
               (:file "proto")))

(defsystem "routeguide"
  :description "The RouteGuide service on clgrpc: its four methods and the feature database."
  :license "Apache-2.0"
  :depends-on ("clgrpc" "routeguide/proto")
  :serial t
  :pathname "src/"
  :components ((:static-file "../../../go/routeguide/features/route_guide_db.json")
               (:file "package")
               (:file "features")
               (:file "service"))
  :in-order-to ((test-op (test-op "routeguide/tests"))))

(defsystem "routeguide/server"
  :description "The RouteGuide server program, with go/routeguide/server's command line."
  :license "Apache-2.0"
  :depends-on ("clgrpc" "clgrpc/health" "clgrpc/reflection" "clgrpc/telemetry" "cmdline" "cmdline/tls"
               "routeguide")
  :pathname "src/"
  :components ((:file "server")))

(defsystem "routeguide/client"
  :description "The RouteGuide client's calls: go/routeguide/client's inputs, the four calls and
their report, for the client program and the load generator."
  :license "Apache-2.0"
  :depends-on ("clgrpc" "routeguide")
  :serial t
  :pathname "src/"
  :components ((:file "client-package")
               (:file "route")
               (:file "client")))

(defsystem "routeguide/client-main"
  :description "The RouteGuide client program, with go/routeguide/client's command line (its -serve
starts the server in-process)."
  :license "Apache-2.0"
  :depends-on ("clgrpc" "cmdline" "cmdline/tls" "routeguide/client" "routeguide/server")
  :pathname "src/"
  :components ((:file "client-main")))

(defsystem "routeguide/loadgen"
  :description "The Lisp RouteGuide load generator: clgrpc's calls, driven by the Go load generator."
  :license "Apache-2.0"
  :depends-on ("clgrpc" "cmdline" "latency-histogram" "routeguide" "routeguide/client")
  :serial t
  :pathname "src/"
  :components ((:file "loadgen-package")
               (:file "loadgen-ops")
               (:file "loadgen-run")
               (:file "loadgen-agent")))

(defsystem "routeguide/tests"
  :description "Interop tests: Lisp client against the Go server, Go client against the Lisp server."
  :depends-on ("routeguide" "routeguide/server" "fiveam")
  :serial t
  :pathname "tests/"
  :components ((:file "interop-tests"))
  :perform (test-op (o c) (uiop:symbol-call '#:routeguide.tests '#:run-tests-or-fail)))
