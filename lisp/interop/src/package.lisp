;;;; The package of clgrpc's interop server and client: gRPC's standard
;;;; grpc.testing.TestService and the client test cases of gRPC's "interop
;;;; test descriptions".  The generated protocol code is in INTEROP.PROTO,
;;;; defined by the lisp_proto_library //lisp/interop:test_lisp_proto under
;;;; Bazel and by proto.lisp under ASDF.

(defpackage #:interop
  (:use #:cl #:cmdline #:interop.proto)
  (:documentation "gRPC's interop TestService and client test cases on clgrpc.")
  (:export #:register-interop-service #:start-server #:server-main
           #:*test-cases* #:run-test-case #:client-main))
