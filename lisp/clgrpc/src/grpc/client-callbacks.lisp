;;;; What the connection's reader thread does for a client call: the
;;;; callbacks it runs for the call's HEADERS, DATA and RST_STREAM, which
;;;; commit the call to a response, schedule a transparent retry or end the
;;;; call; and ending a call (completed, failed, or past its deadline).  All
;;;; of it runs with the connection lock held; CLIENT-DEADLINE-EXPIRED takes
;;;; the lock itself.

(in-package #:clgrpc.grpc)

;;; ------------------------------------------------------------------
;;; Ending calls (connection lock held)

(defun %client-complete (call code message trailers)
  (unless (call-status call)
    (let ((deadline (call-%deadline call)))
      (when (and deadline (/= code +ok+) (>= (now-us) deadline))
        ;; Past our deadline, whatever the server did about it (grpc-go
        ;; resets the stream with CANCEL) the outcome is DEADLINE_EXCEEDED.
        (setf code +deadline-exceeded+ message "deadline exceeded")))
    (setf (call-status call) code
          (call-status-message call) message
          (call-trailers call) trailers)
    (%call-over call)
    (broadcast-if-waiting (call-waiters call) (call-cv call))))

(defun %client-fail (call code message)
  "End CALL locally: cancel its stream so the server stops too."
  (unless (call-status call)
    (%client-complete call code message nil)
    (let ((stream (call-stream call)))
      (when stream
        (clgrpc.http2:stream-reset (call-conn call) stream clgrpc.http2:+cancel+)
        (clgrpc.http2:request-flush (call-conn call))))))

(defun %fail-call (call code message)
  (if (eq (call-role call) :server)
      (%server-fail call code message)
      (%client-fail call code message)))

(defun client-deadline-expired (call)
  "Scheduler thread: the call's deadline passed.  A retry pending is
dropped, never carried out here (the scheduler must not wait on a peer)."
  (with-call-conn-lock (call)
    (when (eq (call-retry-pending call) t)
      (setf (call-retry-pending call) nil))
    (%client-fail call +deadline-exceeded+ "deadline exceeded")))

;;; ------------------------------------------------------------------
;;; Reader-thread callbacks (connection lock held)

(defun %attempt-ended (conn stream call code message headers)
  "The server ended CALL's attempt on STREAM with CODE (HEADERS, the
trailers, are NIL for a reset stream): another attempt follows when the
retry policy allows one (retry.lisp); otherwise the call ends."
  (let ((delay (and (call-retry-throttle-or-policy-p call) (retry-delay-us call code headers))))
    (cond ((null delay)
           (unless (= code +ok+)
             (setf (call-status-details call) (status-details-from-trailers headers)))
           (%client-complete call code message (headers-to-metadata headers)))
          (t
           (when (clgrpc.http2:stream-can-send-p stream)
             ;; Our side of the old stream may still be open: close it.
             (clgrpc.http2:stream-reset conn stream clgrpc.http2:+cancel+)
             (clgrpc.http2:request-flush conn))
           (setf (clgrpc.http2:h2-stream-user stream) nil)
           (end-attempt call code)
           (reset-for-retry call)
           ;; The thread that next waits on or uses the call opens it again.
           (setf (call-retry-pending call) t
                 (call-retry-at call) (+ (now-us) delay))
           (broadcast-if-waiting (call-waiters call) (call-cv call))))))

(defun status-from-trailers (headers)
  "(values code message) from grpc-status and grpc-message."
  (let ((status (cdr (assoc "grpc-status" headers :test #'string=)))
        (message (cdr (assoc "grpc-message" headers :test #'string=))))
    (let ((code (and status (every #'digit-char-p status) (plusp (length status))
                     (parse-integer status))))
      (if code
          (values code (if message (percent-decode-message message) ""))
          (values +unknown+ "missing grpc-status in trailers")))))

(defun client-on-headers (conn stream headers end-stream)
  (let ((call (clgrpc.http2:h2-stream-user stream)))
    (when (and call (not (call-status call)))
      (if (not (call-head-received call))
          ;; First block: the response head (maybe trailers-only).
          (let ((status (cdr (assoc ":status" headers :test #'string=)))
                (content-type (cdr (assoc "content-type" headers :test #'string=))))
            (setf (call-head-received call) t)
            (cond ((string/= status "200")
                   (if (assoc "grpc-status" headers :test #'string=)
                       (multiple-value-bind (code message) (status-from-trailers headers)
                         (%attempt-ended conn stream call code message headers))
                       (%client-fail call (status-from-http-status
                                           (or (ignore-errors (parse-integer status)) 0))
                                     (format nil "HTTP status ~A" status))))
                  ((not (grpc-content-type-p content-type))
                   (%client-fail call +unknown+
                                 (format nil "invalid content-type ~S" content-type)))
                  (end-stream
                   (multiple-value-bind (code message) (status-from-trailers headers)
                     (%attempt-ended conn stream call code message headers)))
                  (t
                   ;; A response has begun: the call stays on this attempt.
                   (commit-call call)
                   (let ((encoding (cdr (assoc "grpc-encoding" headers :test #'string=))))
                     (if (and encoding (not (supported-encoding-p encoding)))
                         (%client-fail call +internal+
                                       (format nil "response grpc-encoding ~A is not supported"
                                               encoding))
                         (setf (call-recv-gzip call) (equal encoding "gzip"))))
                   (setf (call-%response-metadata call) (headers-to-metadata headers)))))
          ;; Trailers.
          (multiple-value-bind (code message) (status-from-trailers headers)
            (when (and (= code +ok+) (plusp (call-asm-prefix call)))
              (setf code +internal+ message "stream ended inside a message"))
            (%attempt-ended conn stream call code message headers)))
      (when (and end-stream (call-status call)
                 (clgrpc.http2:stream-can-send-p stream))
        ;; The server finished while we were still sending: stop.
        (clgrpc.http2:stream-reset conn stream clgrpc.http2:+no-error+)
        (clgrpc.http2:request-flush conn)))))

(defun client-on-data (conn stream octets start end end-stream)
  (let ((call (clgrpc.http2:h2-stream-user stream)))
    (when (and call (not (call-status call)))
      (%feed call conn stream octets start end)
      (when (and end-stream (not (call-status call)))
        (%client-fail call +internal+ "server ended the stream without trailers")))))

(defun %transparently-retryable-p (call code origin)
  "The server refused CALL's stream without processing it (GOAWAY above
its identifier, or REFUSED_STREAM), nothing of the response has come, and
everything sent can be sent again: gRPC's transparent retry, once per call."
  (and (or (eq origin :goaway)
           (and (eq origin :peer) (= code clgrpc.http2:+refused-stream+)))
       ;; Once per call: every attempt but the policy's was transparent.
       (= (call-attempts call) (1+ (call-retries call)))
       (not (call-head-received call))
       (or (call-request-octets call) (zerop (call-messages-sent call))
           ;; Every message sent is kept to be sent again.
           (and (call-retry-policy call) (not (call-committed call))))))

(defun client-on-reset (conn stream code origin)
  (let ((call (clgrpc.http2:h2-stream-user stream)))
    (when (and call (not (call-status call)))
      (if (%transparently-retryable-p call code origin)
          ;; The thread that next waits on or uses the call opens it again.
          (progn (end-attempt call +unavailable+)
                 (setf (call-retry-pending call) t)
                 (broadcast-if-waiting (call-waiters call) (call-cv call)))
          (let ((status (case origin
                          (:peer (status-from-http2-error code))
                          (:local +internal+)
                          (t +unavailable+)))
                (message (case origin
                           (:peer (format nil "stream reset by the server (~A)"
                                          (clgrpc.http2:error-code-name code)))
                           (:local (format nil "protocol error on the stream (~A)"
                                           (clgrpc.http2:error-code-name code)))
                           (:goaway "not processed before the server's GOAWAY")
                           (t (or (clgrpc.http2:connection-close-reason conn)
                                  "connection closed")))))
            (if (or (eq origin :local) (call-head-received call))
                (%client-complete call status message nil)
                ;; Cut off before any response: the retry policy may try again.
                (%attempt-ended conn stream call status message nil)))))))
