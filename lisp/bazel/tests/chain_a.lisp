;;;; Fixture for the rules' tests: file a of a three-file library.

(defpackage #:chain-a (:use #:common-lisp))
(in-package #:chain-a)
(defun value () :a)
