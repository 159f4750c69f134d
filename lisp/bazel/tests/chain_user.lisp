;;;; Fixture: a library that depends on the chain.

(defpackage #:chain-user (:use #:common-lisp))
(in-package #:chain-user)
(defun values-of-chain () (list (chain-a::value) (chain-b::value) (chain-c::value)))
