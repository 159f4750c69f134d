;;;; RouteGuide messages (POINT, FEATURE, ...) and service stubs
;;;; (ROUTE-GUIDE-GET-FEATURE, REGISTER-ROUTE-GUIDE, ...) for ASDF, which
;;;; loads this file as the system "routeguide/proto".
;;;;
;;;; Bazel does not compile it: there the lisp_proto_library
;;;; //lisp/routeguide:routeguide_lisp_proto writes the same forms, naming
;;;; the descriptor set that //proto/routeguide:routeguide_proto builds.
;;;; ASDF has no proto_library, so it reads a checked-in copy of that
;;;; descriptor set (data/routeguide_proto-descriptor-set.proto.bin, named as
;;;; the build names it), which //lisp/routeguide:routeguide_descriptor_set_test
;;;; keeps identical to the build's (`tools/bazel run
;;;; //lisp/routeguide:routeguide_descriptor_set` refreshes it).

(defpackage #:routeguide.proto
  (:use #:cl)
  (:documentation "Protobuf messages and gRPC stubs generated from proto/routeguide/route_guide.proto."))

(in-package #:routeguide.proto)

(clgrpc.protobuf:define-messages-from-descriptor-set "data/routeguide_proto-descriptor-set.proto.bin" :export t)
(clgrpc.codegen:define-services-from-descriptor-set "data/routeguide_proto-descriptor-set.proto.bin" :export t)
