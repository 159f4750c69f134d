;;;; Fixture for the rules' tests: file b of a three-file library.

(defpackage #:chain-b (:use #:common-lisp))
(in-package #:chain-b)
(defun value () :b)
