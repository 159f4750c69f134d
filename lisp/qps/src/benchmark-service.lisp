;;;; grpc.testing.BenchmarkService, the service a benchmark server runs and
;;;; a benchmark client loads, answering as gRPC's own benchmark servers do:
;;;; each response carries a payload of the size its request asks for.
;;;;
;;;;   UnaryCall            one response per request
;;;;   StreamingCall        ping-pong: a response for each request
;;;;   StreamingFromClient  every request read, then one response
;;;;   StreamingFromServer  one request, then responses until the client
;;;;                        ends the call
;;;;   StreamingBothWays    a response for each request, as StreamingCall

(in-package #:qps)

(defconstant +cached-sizes+ 8
  "How many payload sizes the worker keeps made: a benchmark asks for one or
two, and a peer asking for every size in turn must not grow the heap.")

(defvar *zero-bodies* (make-hash-table :synchronized t)
  "Payload bodies by size, shared (a body is only read), at most
+CACHED-SIZES+ of them.")

(defun zero-body (size)
  (or (gethash size *zero-bodies*)
      (let ((body (make-array size :element-type '(unsigned-byte 8) :initial-element 0)))
        (when (< (hash-table-count *zero-bodies*) +cached-sizes+)
          (setf (gethash size *zero-bodies*) body))
        body)))

(defun response-for (request)
  "The SimpleResponse to REQUEST: a COMPRESSABLE payload of its
response_size zero octets."
  (let ((size (simple-request-response-size request))
        (type (simple-request-response-type request)))
    (unless (member type '(:compressable 0))
      (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+invalid-argument+
                                    "response_type ~A is not supported" (enum-name type)))
    (unless (<= 0 size +max-payload+)
      (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+invalid-argument+
                                    "response_size ~D is not from 0 to ~D" size +max-payload+))
    (make-simple-response :payload (make-payload :type :compressable :body (zero-body size)))))

(defun unary-call (request call)
  (declare (ignore call))
  (response-for request))

(defun ping-pong (call)
  (loop for request = (clgrpc.grpc:call-recv call)
        while request
        do (clgrpc.grpc:call-send call (response-for request))))

(defun ping-pong-each (request call)
  "PING-PONG called per message (:EACH-MESSAGE): NIL is the end."
  (when request
    (clgrpc.grpc:call-send call (response-for request))))

(defun streaming-from-client (call)
  (let ((last nil))
    (loop for request = (clgrpc.grpc:call-recv call)
          while request
          do (setf last request))
    (if last
        (response-for last)
        (make-simple-response))))

(defun streaming-from-client-each (request call)
  "STREAMING-FROM-CLIENT called per message (:EACH-MESSAGE): the last
request is kept in the call's state, and NIL, the end, answers it."
  (if request
      (progn (setf (clgrpc.grpc:call-state call) request) nil)
      (let ((last (clgrpc.grpc:call-state call)))
        (if last
            (response-for last)
            (make-simple-response)))))

(defun streaming-from-server (request call)
  "Responses until the client cancels the call or the server stops; either
makes CALL-SEND signal, which ends the handler."
  (let ((response (response-for request)))
    (loop (clgrpc.grpc:call-send call response))))

(defun register-benchmark-handlers (server &key each-message)
  "Serve grpc.testing.BenchmarkService on the clgrpc SERVER; with
EACH-MESSAGE, the handlers of the methods whose requests stream are called
per message."
  (let ((ping-pong (if each-message #'ping-pong-each #'ping-pong)))
    (register-benchmark-service server
                                :unary-call #'unary-call
                                :streaming-call ping-pong
                                :streaming-from-client (if each-message
                                                           #'streaming-from-client-each
                                                           #'streaming-from-client)
                                :streaming-from-server #'streaming-from-server
                                :streaming-both-ways ping-pong
                                :each-message (and each-message
                                                   '(:streaming-call :streaming-both-ways
                                                     :streaming-from-client)))))
