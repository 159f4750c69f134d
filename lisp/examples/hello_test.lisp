(defpackage #:hello.tests
  (:use #:common-lisp #:fiveam))

(in-package #:hello.tests)

(def-suite all :description "The example's tests.")
(in-suite all)

(test greeting-names-sbcl
  (is (search "SBCL" (hello:greeting))))

(test main-returns-success
  (is (eql 0 (let ((*standard-output* (make-broadcast-stream))) (hello:main)))))
