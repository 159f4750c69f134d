;;;; The client test cases of gRPC's "interop test descriptions" that need
;;;; no TLS, credentials or xDS, each a function of a channel that returns
;;;; normally when the case passes and signals CASE-FAILURE when it does not.
;;;; Sizes, metadata and messages are the descriptions' own.

(in-package #:interop)

(define-condition case-failure (error)
  ((message :initarg :message :reader case-failure-message))
  (:report (lambda (c stream) (write-string (case-failure-message c) stream))))

(defun fail (format-control &rest args)
  (error 'case-failure :message (apply #'format nil format-control args)))

(defun code-name (code)
  (clgrpc.grpc:status-code-name code))

(defmacro expect-status ((code what) &body body)
  "Run BODY, which must end in a GRPC-ERROR of status CODE; return it."
  (let ((e (gensym "E")))
    `(handler-case (progn ,@body
                          (fail "~A: succeeded, want ~A" ,what (code-name ,code)))
       (clgrpc.grpc:grpc-error (,e)
         (unless (= (clgrpc.grpc:grpc-error-code ,e) ,code)
           (fail "~A: ~A (~A), want ~A" ,what (code-name (clgrpc.grpc:grpc-error-code ,e))
                 (clgrpc.grpc:grpc-error-message ,e) (code-name ,code)))
         ,e))))

(defun zeros (n) (make-array n :element-type '(unsigned-byte 8) :initial-element 0))

(defun payload-of (n) (make-payload :type :compressable :body (zeros n)))

(defun check-payload (what payload size)
  (let ((body (and payload (payload-body payload))))
    (unless (and body (= (length body) size) (every #'zerop body))
      (fail "~A: payload of ~:[no~;~:*~D~] octets, want ~D zeros" what (and body (length body)) size))))

(defun check-compression-flag (what call want)
  (unless (eq (and (clgrpc.grpc:call-received-compressed-p call) t) want)
    (fail "~A: response ~:[not ~;~]compressed, want ~:[uncompressed~;compressed~]"
          what (clgrpc.grpc:call-received-compressed-p call) want)))

(defun bool-value (value) (make-bool-value :value value))

(defparameter +request-sizes+ '(27182 8 1828 45904))
(defparameter +response-sizes+ '(31415 9 2653 58979))

(defun large-request (&rest initargs)
  (apply #'make-simple-request :response-type :compressable :response-size 314159
                               :payload (payload-of 271828) initargs))

;;; ------------------------------------------------------------------
;;; Unary

(defun empty-unary (channel)
  (let ((response (test-service-empty-call channel (make-empty))))
    (unless (typep response 'empty)
      (fail "EmptyCall returned ~S" response))))

(defun large-unary (channel)
  (check-payload "UnaryCall" (simple-response-payload (test-service-unary-call channel (large-request)))
                 314159))

(defun client-compressed-unary (channel)
  (expect-status (clgrpc.grpc:+invalid-argument+ "probe (uncompressed, expect_compressed)")
    (test-service-unary-call channel (large-request :expect-compressed (bool-value t))))
  (check-payload "compressed request"
                 (simple-response-payload
                  (test-service-unary-call channel (large-request :expect-compressed (bool-value t))
                                           :compress t))
                 314159)
  (check-payload "uncompressed request"
                 (simple-response-payload
                  (test-service-unary-call channel (large-request :expect-compressed (bool-value nil))))
                 314159))

(defun server-compressed-unary (channel)
  (dolist (compressed '(t nil))
    (multiple-value-bind (response call)
        (test-service-unary-call channel (large-request :response-compressed (bool-value compressed)))
      (let ((what (format nil "response_compressed ~:[false~;true~]" compressed)))
        (check-compression-flag what call compressed)
        (check-payload what (simple-response-payload response) 314159)))))

;;; ------------------------------------------------------------------
;;; Streaming

(defun client-streaming (channel)
  (let ((call (test-service-streaming-input-call channel)))
    (dolist (size +request-sizes+)
      (clgrpc.grpc:call-send call (make-streaming-input-call-request :payload (payload-of size))))
    (let ((total (streaming-input-call-response-aggregated-payload-size
                  (clgrpc.grpc:call-close-and-recv call))))
      (unless (= total 74922)
        (fail "aggregated_payload_size ~D, want 74922" total)))))

(defun client-compressed-streaming (channel)
  (expect-status (clgrpc.grpc:+invalid-argument+ "probe (uncompressed, expect_compressed)")
    (let ((call (test-service-streaming-input-call channel)))
      (clgrpc.grpc:call-send call (make-streaming-input-call-request
                                   :expect-compressed (bool-value t) :payload (payload-of 27182)))
      (clgrpc.grpc:call-close-and-recv call)))
  (let ((call (test-service-streaming-input-call channel :compress t)))
    (clgrpc.grpc:call-send call (make-streaming-input-call-request
                                 :expect-compressed (bool-value t) :payload (payload-of 27182)))
    (clgrpc.grpc:call-send call (make-streaming-input-call-request
                                 :expect-compressed (bool-value nil) :payload (payload-of 45904))
                           :compress nil)
    (let ((total (streaming-input-call-response-aggregated-payload-size
                  (clgrpc.grpc:call-close-and-recv call))))
      (unless (= total 73086)
        (fail "aggregated_payload_size ~D, want 73086" total)))))

(defun receive-sizes (call sizes &optional compressed)
  "Receive one response per size, then the end of the stream; COMPRESSED,
if given, lists whether each must have come compressed."
  (loop for size in sizes
        for i from 0
        do (let ((response (clgrpc.grpc:call-recv call))
                 (what (format nil "response ~D" i)))
             (unless response
               (fail "~A responses, want ~A" i (length sizes)))
             (check-payload what (streaming-output-call-response-payload response) size)
             (when compressed
               (check-compression-flag what call (nth i compressed)))))
  (when (clgrpc.grpc:call-recv call)
    (fail "more than ~D responses" (length sizes))))

(defun output-request (sizes &key payload compressed)
  (make-streaming-output-call-request
   :response-type :compressable
   :response-parameters (loop for size in sizes
                              for i from 0
                              collect (make-response-parameters
                                       :size size
                                       :compressed (and compressed (bool-value (nth i compressed)))))
   :payload (and payload (payload-of payload))))

(defun server-streaming (channel)
  (receive-sizes (test-service-streaming-output-call channel (output-request +response-sizes+))
                 +response-sizes+))

(defun server-compressed-streaming (channel)
  (receive-sizes (test-service-streaming-output-call
                  channel (output-request '(31415 92653) :compressed '(t nil)))
                 '(31415 92653) '(t nil)))

(defun ping-pong (channel)
  (let ((call (test-service-full-duplex-call channel)))
    (loop for request-size in +request-sizes+
          for response-size in +response-sizes+
          for i from 0
          do (clgrpc.grpc:call-send call (output-request (list response-size) :payload request-size))
             (let ((response (clgrpc.grpc:call-recv call)))
               (unless response
                 (fail "stream ended after ~D responses, want 4" i))
               (check-payload (format nil "response ~D" i)
                              (streaming-output-call-response-payload response) response-size)))
    (clgrpc.grpc:call-close-send call)
    (when (clgrpc.grpc:call-recv call)
      (fail "more than 4 responses"))))

(defparameter +window-sizes+
  (append (make-list 10 :initial-element 20000) (list 900000 (* 2 1024 1024)))
  "Ten messages that use a fifth of a 1 MiB stream window, one that needs
more than is left, and one twice the window.")

(defun messages-beyond-the-window (channel)
  "Not one of gRPC's cases: the large-message cases again past the 1 MiB
stream window both servers advertise, after smaller messages that used part
of it, in every kind of call.  Flow control must return window as the
application reads, or these hang."
  (let ((big (* 2 1024 1024)))
    (check-payload "unary response"
                   (simple-response-payload
                    (test-service-unary-call channel (make-simple-request :response-type :compressable
                                                                          :response-size big
                                                                          :payload (payload-of big))
                                             :timeout 20))
                   big))
  (let ((call (test-service-streaming-input-call channel :timeout 20)))
    (dolist (n +window-sizes+)
      (clgrpc.grpc:call-send call (make-streaming-input-call-request :payload (payload-of n))))
    (let ((sum (streaming-input-call-response-aggregated-payload-size (clgrpc.grpc:call-close-and-recv call))))
      (unless (= sum (reduce #'+ +window-sizes+))
        (fail "aggregated ~D octets, want ~D" sum (reduce #'+ +window-sizes+)))))
  (receive-sizes (test-service-streaming-output-call channel (output-request +window-sizes+) :timeout 20)
                 +window-sizes+)
  (let ((call (test-service-full-duplex-call channel :timeout 20)))
    (loop for n in +window-sizes+
          for i from 0
          do (clgrpc.grpc:call-send call (output-request (list n) :payload n))
             (let ((response (clgrpc.grpc:call-recv call)))
               (unless response
                 (fail "bidi stream ended after ~D echoes" i))
               (check-payload (format nil "echo ~D" i) (streaming-output-call-response-payload response) n)))
    (clgrpc.grpc:call-close-send call)
    (when (clgrpc.grpc:call-recv call)
      (fail "a response after the last echo"))))

(defun empty-stream (channel)
  (let ((call (test-service-full-duplex-call channel)))
    (clgrpc.grpc:call-close-send call)
    (when (clgrpc.grpc:call-recv call)
      (fail "a response to no request"))))

;;; ------------------------------------------------------------------
;;; Cancellation and deadlines

(defun cancel-after-begin (channel)
  (let ((call (test-service-streaming-input-call channel)))
    (clgrpc.grpc:call-cancel call)
    (expect-status (clgrpc.grpc:+cancelled+ "StreamingInputCall after cancel")
      (clgrpc.grpc:call-close-and-recv call))))

(defun cancel-after-first-response (channel)
  (let ((call (test-service-full-duplex-call channel)))
    (clgrpc.grpc:call-send call (output-request '(31415) :payload 27182))
    (check-payload "first response" (streaming-output-call-response-payload
                                     (or (clgrpc.grpc:call-recv call) (fail "no response")))
                   31415)
    (clgrpc.grpc:call-cancel call)
    (expect-status (clgrpc.grpc:+cancelled+ "FullDuplexCall after cancel")
      (clgrpc.grpc:call-recv call))))

(defun timeout-on-sleeping-server (channel)
  (expect-status (clgrpc.grpc:+deadline-exceeded+ "FullDuplexCall with a 1 ms deadline")
    (let ((call (test-service-full-duplex-call channel :timeout 0.001)))
      ;; The deadline may pass before the request goes out: that send fails
      ;; with the same status.
      (clgrpc.grpc:call-send call (output-request '() :payload 27182))
      (clgrpc.grpc:call-recv call))))

;;; ------------------------------------------------------------------
;;; Metadata and status

(defparameter +echo-initial-value+ "test_initial_metadata_value")
(defparameter +echo-trailing-value+
  (make-array 3 :element-type '(unsigned-byte 8) :initial-contents '(#xab #xab #xab)))

(defun check-echoed-metadata (what call)
  (let ((initial (cdr (assoc +echo-initial-key+ (clgrpc.grpc:call-response-metadata call)
                             :test #'string=)))
        (trailing (cdr (assoc +echo-trailing-key+ (clgrpc.grpc:call-peer-trailers call)
                              :test #'string=))))
    (unless (equal initial +echo-initial-value+)
      (fail "~A: initial metadata ~A is ~S, want ~S" what +echo-initial-key+ initial
            +echo-initial-value+))
    (unless (equalp trailing +echo-trailing-value+)
      (fail "~A: trailing metadata ~A is ~S, want ~S" what +echo-trailing-key+ trailing
            +echo-trailing-value+))))

(defun custom-metadata (channel)
  (let ((metadata (list (cons +echo-initial-key+ +echo-initial-value+)
                        (cons +echo-trailing-key+ +echo-trailing-value+))))
    (multiple-value-bind (response call)
        (test-service-unary-call channel (large-request) :metadata metadata)
      (check-payload "UnaryCall" (simple-response-payload response) 314159)
      (check-echoed-metadata "UnaryCall" call))
    (let ((call (test-service-full-duplex-call channel :metadata metadata)))
      (clgrpc.grpc:call-send call (output-request '(314159) :payload 271828))
      (clgrpc.grpc:call-close-send call)
      (receive-sizes call '(314159))
      (check-echoed-metadata "FullDuplexCall" call))))

(defun check-echoed-status (channel message)
  (let ((status (make-echo-status :code 2 :message message)))
    (flet ((check (what e)
             (unless (string= (clgrpc.grpc:grpc-error-message e) message)
               (fail "~A: status message ~S, want ~S" what (clgrpc.grpc:grpc-error-message e)
                     message))))
      (check "UnaryCall"
             (expect-status (clgrpc.grpc:+unknown+ "UnaryCall")
               (test-service-unary-call channel (make-simple-request :response-status status)))))))

(defun status-code-and-message (channel)
  (let ((message "test status message"))
    (check-echoed-status channel message)
    (let ((call (test-service-full-duplex-call channel)))
      (clgrpc.grpc:call-send call (make-streaming-output-call-request
                                   :response-status (make-echo-status :code 2 :message message)))
      (clgrpc.grpc:call-close-send call)
      (let ((e (expect-status (clgrpc.grpc:+unknown+ "FullDuplexCall")
                 (clgrpc.grpc:call-recv call))))
        (unless (string= (clgrpc.grpc:grpc-error-message e) message)
          (fail "FullDuplexCall: status message ~S, want ~S" (clgrpc.grpc:grpc-error-message e)
                message))))))

(defun special-status-message (channel)
  (check-echoed-status channel (format nil "~C~Ctest with whitespace~C~Cand Unicode BMP ~C and non-BMP ~C~C~C"
                                       #\Tab #\Newline #\Return #\Newline (code-char #x263A)
                                       (code-char #x1F608) #\Tab #\Newline)))

(defun unimplemented-method (channel)
  (expect-status (clgrpc.grpc:+unimplemented+ "TestService/UnimplementedCall")
    (test-service-unimplemented-call channel (make-empty))))

(defun unimplemented-service (channel)
  (expect-status (clgrpc.grpc:+unimplemented+ "UnimplementedService/UnimplementedCall")
    (unimplemented-service-unimplemented-call channel (make-empty))))
