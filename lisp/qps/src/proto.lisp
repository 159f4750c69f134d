;;;; gRPC's benchmark protocol for ASDF, which loads this file as the system
;;;; "qps/proto".
;;;;
;;;; Bazel does not compile it: there the lisp_proto_library
;;;; //lisp/qps:qps_lisp_proto writes the same forms, naming the descriptor
;;;; set of //proto/grpc_testing:worker_service_proto and
;;;; :benchmark_service_proto with their imports.  ASDF has no
;;;; proto_library, so it reads a checked-in copy of that descriptor set
;;;; (src/data/qps_lisp_proto-descriptor-set.proto.bin, named as the build
;;;; names it), which //lisp/qps:qps_descriptor_set_test keeps identical to
;;;; the build's (`tools/bazel run //lisp/qps:qps_descriptor_set` refreshes
;;;; it).

(defpackage #:qps.proto
  (:use #:cl)
  (:documentation "Protobuf messages and gRPC stubs generated from grpc/testing/worker_service.proto
and grpc/testing/benchmark_service.proto."))

(in-package #:qps.proto)

(clgrpc.protobuf:define-messages-from-descriptor-set "data/qps_lisp_proto-descriptor-set.proto.bin" :export t)
(clgrpc.codegen:define-services-from-descriptor-set "data/qps_lisp_proto-descriptor-set.proto.bin" :export t)
