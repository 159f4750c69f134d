;;;; The package of the Lisp RouteGuide load generator (loadgen-agent.lisp
;;;; says what it is).

(defpackage #:routeguide.loadgen
  (:use #:cl #:cmdline #:routeguide.proto #:routeguide #:routeguide.client)
  (:documentation "RouteGuide calls on clgrpc, driven by go/routeguide/loadgen -lisp_client.")
  (:export #:loadgen-main))
