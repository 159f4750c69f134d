;;;; grpc.health.v1 messages and stubs for ASDF, which loads this file as
;;;; the system "clgrpc/health/proto".
;;;;
;;;; Bazel does not compile it: there the lisp_proto_library
;;;; //lisp/clgrpc:health_lisp_proto writes the same forms, naming the
;;;; descriptor set of //proto/health:health_proto.  ASDF has no
;;;; proto_library, so it reads a checked-in copy of that descriptor set
;;;; (data/health_proto-descriptor-set.proto.bin, named as the build names
;;;; it), which //lisp/clgrpc:health_descriptor_set_test keeps
;;;; identical to the build's (`tools/bazel run
;;;; //lisp/clgrpc:health_descriptor_set` refreshes it).

(defpackage #:clgrpc.health.proto
  (:use #:cl)
  (:documentation "Protobuf messages and gRPC stubs generated from grpc/health/v1/health.proto."))

(in-package #:clgrpc.health.proto)

(clgrpc.protobuf:define-messages-from-descriptor-set "data/health_proto-descriptor-set.proto.bin" :export t)
(clgrpc.codegen:define-services-from-descriptor-set "data/health_proto-descriptor-set.proto.bin" :export t)
