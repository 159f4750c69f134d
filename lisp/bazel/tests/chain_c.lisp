;;;; Fixture for the rules' tests: file c of a three-file library.

(defpackage #:chain-c (:use #:common-lisp))
(in-package #:chain-c)
(defun value () :c)
