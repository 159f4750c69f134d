;;;; Messages and service stubs generated at compile time from the
;;;; descriptor set of test_types.proto (with route_guide.proto imported):
;;;; this file is the codegen test's subject, codegen-tests.lisp checks it.

(in-package #:clgrpc.tests.pb)

(clgrpc.protobuf:define-messages-from-descriptor-set "data/test_types.pb")
(clgrpc.codegen:define-services-from-descriptor-set "data/test_types.pb")
