;;;; The smallest Lisp program of this repository: proves the toolchain end to end.

(defpackage #:hello
  (:use #:common-lisp)
  (:export #:main #:greeting))

(in-package #:hello)

(defun greeting ()
  (format nil "Hello from ~A ~A on ~A"
          (lisp-implementation-type) (lisp-implementation-version) (machine-type)))

(defun main ()
  (write-line (greeting))
  0)
