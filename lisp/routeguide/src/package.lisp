;;;; The package of the Lisp RouteGuide: the service, its database, the
;;;; client, server and load generator programs.  The generated protocol code is in
;;;; ROUTEGUIDE.PROTO, defined by the lisp_proto_library
;;;; //lisp/routeguide:routeguide_lisp_proto under Bazel and by proto.lisp
;;;; under ASDF.

(defpackage #:routeguide
  (:use #:cl #:cmdline #:routeguide.proto)
  (:documentation "The RouteGuide service on clgrpc, behaving like go/routeguide/service.")
  (:export #:make-service #:register-service #:load-features #:default-features
           #:start-server #:server-main #:client-main #:run-client #:route #:parse-json))
