;;;; A suite that fails on purpose: expect_failure_test proves that lisp_test reports failures.

(defpackage #:failing.tests
  (:use #:common-lisp #:fiveam))

(in-package #:failing.tests)

(def-suite all)
(in-suite all)

(test arithmetic-still-works
  (is (= 4 (+ 2 2))))

(test this-check-fails
  (is (= 5 (+ 2 2)) "two and two make four, not five"))
