;;;; The Greeter server: the two methods, and a function that serves them.

(defpackage #:greeter
  (:use #:cl #:greeter.proto)
  (:documentation "The Greeter service's server and client on clgrpc.")
  (:export #:start-server #:greet #:greet-each))

(in-package #:greeter)

(defun say-hello (request call)
  "SayHello: a reply for the request's name.  The client's deadline and
metadata are on CALL (CLGRPC.GRPC:CALL-DEADLINE, CALL-METADATA)."
  (declare (ignore call))
  (when (string= (hello-request-name request) "")
    (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+invalid-argument+ "a name, please"))
  (make-hello-reply :message (format nil "Hello, ~A!" (hello-request-name request))))

(defun say-hello-to-each (call)
  "SayHelloToEach: a reply for each name, as it arrives."
  (loop for request = (clgrpc.grpc:call-recv call)
        while request
        do (clgrpc.grpc:call-send call (say-hello request call))))

(defun start-server (&key (host "127.0.0.1") (port 0))
  "A running Greeter server; (values server port).  Stop it with
CLGRPC.GRPC:SERVER-STOP."
  (let ((server (clgrpc.grpc:make-server)))
    (register-greeter server :say-hello #'say-hello :say-hello-to-each #'say-hello-to-each)
    (values server (clgrpc.grpc:server-start server :host host :port port))))
