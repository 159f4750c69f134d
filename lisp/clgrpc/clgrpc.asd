;;;; ASDF definition for clgrpc, a pure Common Lisp gRPC implementation.
;;;;
;;;; Files are listed in dependency order and each compiles on its own once
;;;; its predecessors are loaded (the Bazel rules compile one file per action).

(defsystem "clgrpc"
  :description "Pure Common Lisp gRPC: HTTP/2, HPACK and protobuf wire format."
  :license "Apache-2.0"
  :depends-on ()
  :serial t
  :pathname "src/"
  :components ((:file "package")
               (:file "octets")
               (:file "utf8")
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
                             (:file "decode")))
               (:module "http2"
                :serial t
                :components ((:file "errors")
                             (:file "constants")
                             (:file "frame-header")
                             (:file "settings")
                             (:file "frame-encode")
                             (:file "frame-decode")))
               (:module "descriptor"
                :serial t
                :components ((:file "model")
                             (:file "reader"))))
  :in-order-to ((test-op (test-op "clgrpc/tests"))))

(defsystem "clgrpc/tests"
  :description "FiveAM tests for clgrpc."
  :depends-on ("clgrpc" "fiveam")
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
               (:file "run"))
  :perform (test-op (o c) (uiop:symbol-call '#:clgrpc.tests '#:run-tests-or-fail)))
