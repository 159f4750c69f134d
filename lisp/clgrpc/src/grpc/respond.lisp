;;;; Responses: the response head, messages' last DATA, and trailers, written
;;;; under the connection's lock through the HTTP/2 layer's stream calls.
;;;;
;;;; A unary response (HEADERS, DATA and trailers) is appended in one hold of
;;;; the lock.  What the peer's window or a full output cannot take now is
;;;; parked by the HTTP/2 layer (STREAM-WRITE-LAST-DATA), and the trailers
;;;; follow once it is written: no handler thread waits on a peer here.  Who
;;;; writes the output is the HTTP/2 layer's business too
;;;; (WITH-STREAM-OUTPUT): the reactor, batched with the rest of its turn,
;;;; for a handler it ran inline or one that finished while it was in a
;;;; turn; the handler's own thread otherwise, with one send(2), or batched
;;;; with others when another thread is writing.

(in-package #:clgrpc.grpc)

(defparameter +response-headers+
  '((":status" . "200") ("content-type" . "application/grpc")))

(defun %send-response-headers (call)
  "Lock held: the response HEADERS, once.  Returns true if they are out; if
the application's metadata cannot be sent, the call ends with INTERNAL
(trailers-only) and this returns NIL."
  (if (call-headers-sent call)
      t
      ;; grpc-encoding must survive the trim below: compressed messages without it are unreadable.
      (let* ((required (if (call-send-gzip call)
                           (append +response-headers+ '(("grpc-encoding" . "gzip")))
                           +response-headers+))
             (metadata (call-%response-metadata call))
             (headers (if metadata
                          (handler-case (append required (metadata-to-headers metadata))
                            (grpc-error (e)
                              (%send-trailers call +internal+ (grpc-error-message e) nil)
                              (return-from %send-response-headers nil)))
                          required)))
        (unless (clgrpc.http2:header-list-fits-p (call-conn call) headers)
          ;; The client said it takes no more (SETTINGS_MAX_HEADER_LIST_SIZE): custom metadata goes.
          (setf headers required))
        (setf (call-headers-sent call) t)
        (clgrpc.http2:stream-write-headers (call-conn call) (call-stream call) headers)
        t)))

(defun trailer-headers (code message metadata)
  (let ((tail (when metadata (metadata-to-headers metadata))))
    (when (plusp (length message))
      ;; Not indexed: messages vary and would churn the HPACK table.
      (push (list "grpc-message" (percent-encode-message message) :without) tail))
    (cons (cons "grpc-status" (status-string code)) tail)))

(defun %send-trailers (call code message metadata &key (reset-code clgrpc.http2:+no-error+))
  "End the call with status CODE: trailers (a trailers-only response if no
headers went out yet), then RST_STREAM if the client is still sending, so
it stops (RFC 9113 8.1)."
  (let ((conn (call-conn call))
        (stream (call-stream call)))
    (setf (call-status call) code
          (call-status-message call) message)
    (%call-over call)
    (when (and (clgrpc.http2:stream-can-send-p stream)
               (clgrpc.http2:stream-mid-message-p stream))
      ;; Part of a message is out (a deadline or a failure came while the
      ;; rest waited): trailers now would cut it short on the wire, so the
      ;; stream is reset instead, as grpc-go's server does on its deadline.
      (clgrpc.http2:stream-reset conn stream clgrpc.http2:+cancel+))
    (when (clgrpc.http2:stream-can-send-p stream)
      (let ((trailers (handler-case (trailer-headers code message metadata)
                        (grpc-error (e)
                          (trailer-headers +internal+ (grpc-error-message e) nil))))
            (details (and (/= code +ok+)
                          (status-details-header code message (call-status-details call)))))
        (when (and details (clgrpc.http2:header-list-fits-p conn (append trailers (list details))))
          ;; Details the client cannot take are dropped, the status kept.
          (setf trailers (append trailers (list details))))
        (unless (clgrpc.http2:header-list-fits-p conn trailers)
          (setf trailers (trailer-headers +internal+ "response trailers exceed the client's header list limit" nil)))
        (clgrpc.http2:stream-write-headers conn stream
                                     (if (call-headers-sent call)
                                         trailers
                                         (append +response-headers+ trailers))
                                     :end-stream t))
      (setf (call-headers-sent call) t))
    (when (clgrpc.http2:stream-can-receive-p stream)
      (clgrpc.http2:stream-reset conn stream reset-code))
    (%release-undispatched call)
    (broadcast-if-waiting (call-waiters call) (call-cv call))))

(defun %trailers-only (conn stream http-status code message &optional extra)
  "Refuse a request before any call exists."
  (clgrpc.http2:stream-write-headers
   conn stream
   (list* (cons ":status" http-status) '("content-type" . "application/grpc")
          (cons "grpc-status" (status-string code))
          (list "grpc-message" (percent-encode-message message) :without)
          extra)
   :end-stream t)
  (when (clgrpc.http2:stream-can-receive-p stream)
    (clgrpc.http2:stream-reset conn stream clgrpc.http2:+no-error+))
  (clgrpc.http2:request-flush conn))

(defun %server-fail (call code message)
  (unless (call-status call)
    (%send-trailers call code message nil)
    (clgrpc.http2:request-flush (call-conn call))))

(declaim (ftype function %release-undispatched %give-back-turn))

(defun %trailers-after-park (call code message metadata)
  "What to do once the response's last DATA is written: the trailers.  It
runs inside a write (WITH-STREAM-OUTPUT, or the flush that resumed the
parked rest), which writes them too."
  (lambda (conn stream)
    (declare (ignore conn stream))
    (unless (call-status call)
      (%send-trailers call code message metadata))))

(defun %send-over-budget (call buf code message metadata)
  "Lock held: the response in BUF cannot wait parked within the memory
budget.  A worker sends it as a streaming sender does, waiting for window
(no longer than the send-stall timeout without progress), and then the
trailers, if few of its connection's workers do already and the
process's overdraft has room (CLAIM-SENDER-OVER-BUDGET); otherwise, and on
a reactor, which must not wait, the call fails."
  (let ((conn (call-conn call))
        (octets (obuf-fill buf)))
    (if (or (clgrpc.http2:reader-thread-p conn)
            (not (clgrpc.http2:claim-sender-over-budget conn octets)))
        (%send-trailers call +resource-exhausted+
                        (format nil "a response of ~D octets exceeds the memory budget"
                                (- (obuf-fill buf) 5))
                        nil)
        (unwind-protect
             (case (clgrpc.http2:stream-write-data conn (call-stream call)
                                                   (obuf-data buf) 0 (obuf-fill buf))
               ((t) (unless (call-status call)
                      (%send-trailers call code message metadata)))
               (:stalled (%call-stalled call)))
          (clgrpc.http2:release-sender-over-budget conn octets)))))

(defun server-finish (call code message response metadata)
  "A handler returned (or failed): send RESPONSE, if any, and the trailers,
and give the call's handler slot back."
  (let ((buf nil)
        (conn (call-conn call)))
    (when response
      (handler-case (setf buf (encode-message-frame call response))
        (grpc-error (e) (setf code (grpc-error-code e) message (grpc-error-message e)))
        (error (e) (setf code +internal+
                         message (format nil "failed to encode response: ~A" e)))))
    (clgrpc.http2:with-stream-output (conn)
      (unless (call-status call)
        (if (and buf (%send-response-headers call))
            (multiple-value-bind (sent kept)
                (clgrpc.http2:stream-write-last-data
                 conn (call-stream call) (obuf-data buf) 0 (obuf-fill buf)
                 (%trailers-after-park call code message metadata)
                 :given t)
              (when kept
                ;; The stream holds the encoding now, not a copy of it.
                (obuf-give-away buf))
              (when (eq sent :over-budget)
                (%send-over-budget call buf code message metadata)))
            (unless (call-status call)
              (%send-trailers call code message metadata))))
      ;; In the same hold of the lock as the trailers, not another one after.
      (%give-back-turn call)
      (release-large-scratch))))
