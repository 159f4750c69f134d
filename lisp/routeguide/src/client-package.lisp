;;;; The package of the RouteGuide client: its fixed inputs (route.lisp),
;;;; the four calls and their report (client.lisp), and the client program
;;;; (client-main.lisp).

(defpackage #:routeguide.client
  (:use #:cl #:cmdline #:routeguide.proto #:routeguide)
  (:documentation "The RouteGuide client on clgrpc, with go/routeguide/client's inputs and report.")
  (:export #:client-main #:run-client
           #:known-point #:missing-point #:demo-area #:demo-notes #:route #:+route-seed+
           #:fmt-point))
