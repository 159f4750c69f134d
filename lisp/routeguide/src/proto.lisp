;;;; RouteGuide messages (POINT, FEATURE, ...) and service stubs
;;;; (ROUTE-GUIDE-GET-FEATURE, REGISTER-ROUTE-GUIDE, ...) for ASDF, which
;;;; loads this file as the system "routeguide/proto".
;;;;
;;;; Bazel does not compile it: there the lisp_proto_library
;;;; //lisp/routeguide:routeguide_lisp_proto writes the same forms, naming
;;;; the descriptor set that //proto/routeguide:routeguide_proto builds.
;;;; ASDF has no proto_library, so it reads the checked-in descriptor set
;;;; of the same proto file that clgrpc's tests use
;;;; (lisp/clgrpc/tests/data/route_guide.pb; regenerate.sh there remakes it
;;;; with protoc).

(defpackage #:routeguide.proto
  (:use #:cl)
  (:documentation "Protobuf messages and gRPC stubs generated from proto/routeguide/route_guide.proto."))

(in-package #:routeguide.proto)

(clgrpc.protobuf:define-messages-from-descriptor-set "../../clgrpc/tests/data/route_guide.pb" :export t)
(clgrpc.codegen:define-services-from-descriptor-set "../../clgrpc/tests/data/route_guide.pb" :export t)
