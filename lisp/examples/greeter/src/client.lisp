;;;; The Greeter client: a greeting, and greetings for a stream of names.

(in-package #:greeter)

(defun greet (channel name &key (timeout 5))
  "The server's greeting for NAME (a string); signals CLGRPC.GRPC:GRPC-ERROR
if the call fails."
  (hello-reply-message (greeter-say-hello channel (make-hello-request :name name) :timeout timeout)))

(defun greet-each (channel names &key (timeout 5))
  "The greetings for NAMES on one stream: each name sent, then its reply
read, so neither side's flow-control window ever fills however many names
there are."
  (let ((call (greeter-say-hello-to-each channel :timeout timeout)))
    (prog1 (loop for name in names
                 collect (progn (clgrpc.grpc:call-send call (make-hello-request :name name))
                                (hello-reply-message (clgrpc.grpc:call-recv call))))
      (clgrpc.grpc:call-close-send call)
      ;; The server's end of the stream, and its status.
      (clgrpc.grpc:call-recv call))))
