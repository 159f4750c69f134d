;;;; The RouteGuide service, client and server on clgrpc, and the interop
;;;; tests against the Go RouteGuide (go/routeguide).  The systems match the
;;;; Bazel targets of BUILD.bazel: "routeguide/proto" is the
;;;; lisp_proto_library :routeguide_lisp_proto, "routeguide" the
;;;; lisp_library :routeguide.

(defsystem "routeguide/proto"
  :description "RouteGuide messages and stubs, from the descriptor set of route_guide.proto."
  :license "Apache-2.0"
  :depends-on ("clgrpc")
  :serial t
  :pathname "src/"
  :components ((:static-file "../../clgrpc/tests/data/route_guide.pb")
               (:file "proto")))

(defsystem "routeguide"
  :description "RouteGuide on clgrpc: service, feature database, client and server programs."
  :license "Apache-2.0"
  :depends-on ("clgrpc" "clgrpc/health" "clgrpc/reflection" "cmdline" "cpus" "routeguide/proto")
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
               (:file "client-main")
               (:file "loadgen-ops")
               (:file "loadgen-run")
               (:file "loadgen-cpus")
               (:file "digest")
               (:file "loadgen-results")
               (:file "loadgen-benchfmt")
               (:file "loadgen-main"))
  :in-order-to ((test-op (test-op "routeguide/tests"))))

(defsystem "routeguide/tests"
  :description "Interop tests: Lisp client against the Go server, Go client against the Lisp server."
  :depends-on ("routeguide" "fiveam")
  :serial t
  :pathname "tests/"
  :components ((:file "interop-tests"))
  :perform (test-op (o c) (uiop:symbol-call '#:routeguide.tests '#:run-tests-or-fail)))
