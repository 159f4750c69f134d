;;;; The package of the RouteGuide client's calls: its fixed inputs
;;;; (route.lisp) and the four calls and their report (client.lisp), which
;;;; the client program (client-main.lisp) and the load generator both use.

(defpackage #:routeguide.client
  (:use #:cl #:routeguide.proto #:routeguide)
  (:documentation "The RouteGuide client's calls on clgrpc, with go/routeguide/client's inputs and report.")
  (:export #:run-client #:*rpc-names* #:client-error
           #:known-point #:missing-point #:demo-area #:demo-notes #:route #:+route-seed+
           #:fmt-point))
