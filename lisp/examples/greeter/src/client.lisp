;;;; The Greeter client: a greeting, and greetings for a stream of names.

(in-package #:greeter)

(defun greet (channel name &key (timeout 5))
  "The server's greeting for NAME (a string); signals CLGRPC.GRPC:GRPC-ERROR
if the call fails."
  (hello-reply-message (greeter-say-hello channel (make-hello-request :name name) :timeout timeout)))

(defun greet-each (channel names &key (timeout 5))
  "The greetings for NAMES, sent on one stream as the replies come back."
  (let ((call (greeter-say-hello-to-each channel :timeout timeout)))
    (dolist (name names)
      (clgrpc.grpc:call-send call (make-hello-request :name name)))
    (clgrpc.grpc:call-close-send call)
    (loop for reply = (clgrpc.grpc:call-recv call)
          while reply
          collect (hello-reply-message reply))))
