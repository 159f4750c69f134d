;;;; gRPC's interop server and client on clgrpc.  The systems match the Bazel
;;;; targets of BUILD.bazel: "interop/proto" is the lisp_proto_library
;;;; :test_lisp_proto, "interop" the lisp_library :interop.

(defsystem "interop/proto"
  :description "grpc.testing messages and stubs, from the descriptor set of test.proto."
  :license "Apache-2.0"
  :depends-on ("clgrpc")
  :pathname "src/"
  :serial t
  :components ((:static-file "data/test_lisp_proto-descriptor-set.proto.bin")
               (:file "proto")))

(defsystem "interop"
  :description "grpc.testing.TestService and the interop client test cases on clgrpc."
  :license "Apache-2.0"
  :depends-on ("clgrpc" "clgrpc/reflection" "cmdline" "cmdline/tls" "interop/proto")
  :serial t
  :pathname "src/"
  :components ((:file "package")
               (:file "service")
               (:file "server-main")
               (:file "cases")
               (:file "soak")
               (:file "client-main")))
