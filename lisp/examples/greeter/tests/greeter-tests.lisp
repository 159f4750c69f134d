;;;; The Greeter example's tests: its server and client over loopback, as
;;;; `(asdf:test-system "greeter")` runs them.

(defpackage #:greeter.tests
  (:use #:cl #:fiveam)
  (:export #:run-tests-or-fail))

(in-package #:greeter.tests)

(def-suite :greeter)
(in-suite :greeter)

(defmacro with-greeter ((channel) &body body)
  (let ((server (gensym "SERVER")) (port (gensym "PORT")))
    `(multiple-value-bind (,server ,port) (greeter:start-server)
       (let ((,channel (clgrpc.grpc:make-channel "127.0.0.1" ,port)))
         (unwind-protect (progn ,@body)
           (clgrpc.grpc:channel-close ,channel)
           (clgrpc.grpc:server-stop ,server :grace 1))))))

(test a-greeting
  (with-greeter (channel)
    (is (string= "Hello, Ada!" (greeter:greet channel "Ada")))))

(test a-greeting-needs-a-name
  (with-greeter (channel)
    (handler-case (progn (greeter:greet channel "") (fail "no error"))
      (clgrpc.grpc:grpc-error (e)
        (is (= clgrpc.grpc:+invalid-argument+ (clgrpc.grpc:grpc-error-code e)))))))

(test greetings-on-a-stream
  (with-greeter (channel)
    (is (equal '("Hello, Ada!" "Hello, Grace!" "Hello, Barbara!")
               (greeter:greet-each channel '("Ada" "Grace" "Barbara"))))))

(defun run-tests-or-fail ()
  (unless (run! :greeter)
    (error "greeter tests failed")))
