;;;; grpc.reflection.v1 messages and stubs for ASDF, which loads this file
;;;; as part of the system "clgrpc/reflection/proto".
;;;;
;;;; Bazel does not compile it: there the lisp_proto_library
;;;; //lisp/clgrpc:reflection_v1_lisp_proto writes the same forms, naming
;;;; the descriptor set of //proto/reflection:reflection_v1_proto.  ASDF
;;;; has no proto_library, so it reads a checked-in copy of that descriptor
;;;; set (named as the build names it), which
;;;; //lisp/clgrpc:reflection_descriptor_sets_test keeps identical to the
;;;; build's (`tools/bazel run //lisp/clgrpc:reflection_descriptor_sets`
;;;; refreshes it).

(defpackage #:clgrpc.reflection.v1.proto
  (:use #:cl)
  (:documentation "Protobuf messages and gRPC stubs generated from grpc/reflection/v1/reflection.proto."))

(in-package #:clgrpc.reflection.v1.proto)

(clgrpc.protobuf:define-messages-from-descriptor-set "data/reflection_v1_proto-descriptor-set.proto.bin" :export t)
(clgrpc.codegen:define-services-from-descriptor-set "data/reflection_v1_proto-descriptor-set.proto.bin" :export t)
