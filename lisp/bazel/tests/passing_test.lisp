;;;; A passing suite that uses a library from Debian (alexandria) through the rules.

(defpackage #:passing.tests
  (:use #:common-lisp #:fiveam))

(in-package #:passing.tests)

(def-suite all)
(in-suite all)

(test chain-loads-in-order
  (is (equal '(:a :b :c) (chain-user::values-of-chain))))

(test alexandria-is-available
  (is (equal '(1 2 3) (alexandria:flatten '((1) (2 (3)))))))
