;;;; grpc.testing messages and stubs for ASDF, which loads this file as the
;;;; system "interop/proto".
;;;;
;;;; Bazel does not compile it: there the lisp_proto_library
;;;; //lisp/interop:test_lisp_proto writes the same forms, naming the
;;;; descriptor set of //proto/grpc_testing:test_proto and its imports.
;;;; ASDF has no proto_library, so it reads a checked-in copy of that
;;;; descriptor set (src/data/test_lisp_proto-descriptor-set.proto.bin, named as
;;;; the build names it), which //lisp/interop:test_descriptor_set_test keeps
;;;; identical to the build's (`tools/bazel run
;;;; //lisp/interop:test_descriptor_set` refreshes it).

(defpackage #:interop.proto
  (:use #:cl)
  (:documentation "Protobuf messages and gRPC stubs generated from grpc/testing/test.proto."))

(in-package #:interop.proto)

(clgrpc.protobuf:define-messages-from-descriptor-set "data/test_lisp_proto-descriptor-set.proto.bin" :export t)
(clgrpc.codegen:define-services-from-descriptor-set "data/test_lisp_proto-descriptor-set.proto.bin" :export t)
