;;;; The Greeter's messages (HELLO-REQUEST, HELLO-REPLY) and stubs
;;;; (GREETER-SAY-HELLO, REGISTER-GREETER, ...), generated when this file is
;;;; compiled from greeter.pb, the descriptor set protoc writes:
;;;;
;;;;   protoc --include_imports --descriptor_set_out=greeter.pb greeter.proto
;;;;
;;;; The path is relative to this file.

;;; Made once, not with DEFPACKAGE: the macros below export what they
;;; define, which a DEFPACKAGE evaluated again at load time would not list.
(eval-when (:compile-toplevel :load-toplevel :execute)
  (unless (find-package '#:greeter.proto)
    (make-package '#:greeter.proto :use '(#:cl))))

(in-package #:greeter.proto)

(clgrpc.protobuf:define-messages-from-descriptor-set "../greeter.pb" :export t)
(clgrpc.codegen:define-services-from-descriptor-set "../greeter.pb" :export t)
