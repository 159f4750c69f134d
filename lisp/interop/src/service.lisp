;;;; grpc.testing.TestService, the server side of gRPC's interop tests, with
;;;; every feature of the "Server" section of the interop test descriptions
;;;; that needs no TLS or authentication:
;;;;
;;;;   EmptyCall, UnaryCall, StreamingInputCall, StreamingOutputCall,
;;;;   FullDuplexCall, HalfDuplexCall; Echo Status, Echo Metadata,
;;;;   CompressedRequest (expect_compressed), CompressedResponse
;;;;   (response_compressed and ResponseParameters.compressed), and
;;;;   ResponseParameters.interval_us.
;;;;
;;;; UnimplementedCall and CacheableUnaryCall stay unimplemented, as the
;;;; suite expects (unimplemented_method calls the former).

(in-package #:interop)

(defparameter +echo-initial-key+ "x-grpc-test-echo-initial")
(defparameter +echo-trailing-key+ "x-grpc-test-echo-trailing-bin")

(defun echo-metadata (call)
  "Echo Metadata: the request's echo keys come back, one in the response
headers and one in the trailers."
  (let* ((metadata (clgrpc.grpc:call-metadata call))
         (initial (assoc +echo-initial-key+ metadata :test #'string=))
         (trailing (assoc +echo-trailing-key+ metadata :test #'string=)))
    (when initial
      (clgrpc.grpc:call-set-response-metadata call (list initial)))
    (when trailing
      (clgrpc.grpc:call-set-trailer-metadata call (list trailing)))))

(defun echo-status (status)
  "Echo Status: end the call with STATUS's code and message, unless it is OK."
  (when (and status (/= 0 (echo-status-code status)))
    (let ((code (echo-status-code status)))
      (clgrpc.grpc:raise-grpc-error (if (<= 0 code 16) code clgrpc.grpc:+unknown+)
                                    "~A" (echo-status-message status)))))

(defun true-p (bool-value)
  "The value of a BoolValue field, which is NIL when absent."
  (and bool-value (bool-value-value bool-value)))

(defun check-compressed (expect-compressed call)
  "CompressedRequest: a request that expected compression but came without
it fails with INVALID_ARGUMENT."
  (when (and (true-p expect-compressed) (not (clgrpc.grpc:call-received-compressed-p call)))
    (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+invalid-argument+
                                  "expected a compressed request, got an uncompressed one")))

(defun response-payload (type size)
  "A payload of SIZE zero octets; only COMPRESSABLE exists."
  (unless (member type '(:compressable 0))
    (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+invalid-argument+
                                  "payload type ~A is not supported" type))
  (when (minusp size)
    (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+invalid-argument+
                                  "response size ~D is negative" size))
  (make-payload :type :compressable
                :body (make-array size :element-type '(unsigned-byte 8) :initial-element 0)))

(defun empty-call (request call)
  (declare (ignore request call))
  (make-empty))

(defun unary-call (request call)
  (echo-metadata call)
  (echo-status (simple-request-response-status request))
  (check-compressed (simple-request-expect-compressed request) call)
  (when (true-p (simple-request-response-compressed request))
    (clgrpc.grpc:call-set-response-compression call t))
  (make-simple-response :payload (response-payload (simple-request-response-type request)
                                                   (simple-request-response-size request))))

(defun send-responses (call type parameters)
  "One response per ResponseParameters, each after its interval, each
compressed as it asks."
  (when (some (lambda (p) (true-p (response-parameters-compressed p))) parameters)
    (clgrpc.grpc:call-set-response-compression call t))
  (dolist (p parameters)
    (let ((interval (response-parameters-interval-us p)))
      (when (plusp interval)
        (sleep (/ interval 1000000))))
    (clgrpc.grpc:call-send call (make-streaming-output-call-response
                                 :payload (response-payload type (response-parameters-size p)))
                           :compress (true-p (response-parameters-compressed p)))))

(defun streaming-output-call (request call)
  (echo-metadata call)
  (send-responses call (streaming-output-call-request-response-type request)
                  (streaming-output-call-request-response-parameters request)))

(defun streaming-input-call (call)
  (echo-metadata call)
  (let ((total 0))
    (loop for request = (clgrpc.grpc:call-recv call)
          while request
          do (check-compressed (streaming-input-call-request-expect-compressed request) call)
             (let ((payload (streaming-input-call-request-payload request)))
               (when payload
                 (incf total (length (payload-body payload))))))
    (make-streaming-input-call-response :aggregated-payload-size total)))

(defun full-duplex-call (call)
  (echo-metadata call)
  (loop for request = (clgrpc.grpc:call-recv call)
        while request
        do (echo-status (streaming-output-call-request-response-status request))
           (send-responses call (streaming-output-call-request-response-type request)
                           (streaming-output-call-request-response-parameters request))))

(defun half-duplex-call (call)
  "Every request first, then the responses to each, in order."
  (echo-metadata call)
  (let ((requests (loop for request = (clgrpc.grpc:call-recv call)
                        while request
                        collect request)))
    (dolist (request requests)
      (echo-status (streaming-output-call-request-response-status request))
      (send-responses call (streaming-output-call-request-response-type request)
                      (streaming-output-call-request-response-parameters request)))))

(defun register-interop-service (server)
  "Serve grpc.testing.TestService on the clgrpc SERVER."
  (register-test-service server
                         :empty-call #'empty-call
                         :unary-call #'unary-call
                         :streaming-output-call #'streaming-output-call
                         :streaming-input-call #'streaming-input-call
                         :full-duplex-call #'full-duplex-call
                         :half-duplex-call #'half-duplex-call))
