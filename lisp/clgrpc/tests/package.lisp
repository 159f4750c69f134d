;;;; Test package and the root FiveAM suite.

(defpackage #:clgrpc.tests
  (:use #:cl #:fiveam #:clgrpc.octets)
  (:export #:run-tests #:run-tests-or-fail #:run-tests-and-exit))

(in-package #:clgrpc.tests)

(def-suite :clgrpc :description "All clgrpc tests.")

(defun hex (string)
  "Octets from a spaced hex dump, as the RFCs print them."
  (hex-to-octets string))

(defun obuf-hex (buf)
  (octets-to-hex (obuf-data buf) :end (obuf-fill buf)))

(defmacro with-obuf ((var) &body body)
  "Run BODY with a fresh output buffer VAR and return its contents as hex."
  `(let ((,var (make-obuf 16)))
     ,@body
     (obuf-hex ,var)))

(defpackage #:clgrpc.tests.pb
  (:use #:cl)
  (:documentation "Code generated from tests/data/test_types.pb (which imports
route_guide.proto), for the codegen tests."))
