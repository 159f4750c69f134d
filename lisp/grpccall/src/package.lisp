;;;; The package of grpccall, the command-line caller.

(defpackage #:grpccall
  (:use #:cl #:cmdline)
  (:documentation "Calls one gRPC method with clgrpc's client and prints each call's outcome.")
  (:export #:main))
