;;;; Sending and receiving messages on a call, from handler or client
;;;; threads (both sides).

(in-package #:clgrpc.grpc)

(declaim (ftype function each-message-call-p))

(declaim (ftype function %send-response-headers %retry-call-if-pending keep-for-retry))

(defparameter +no-octets+ (make-octets 0))

(defmacro with-call-conn-lock ((call) &body body)
  "BODY with the lock of the connection CALL is on now held (a transparent
retry can move a client call to another connection), returning its values.
Never carries out a retry itself: for the scheduler and for cancelling."
  (let ((conn (gensym "CONN")) (block (gensym "CALL-LOCKED")))
    `(block ,block
       (loop
         (let ((,conn (call-conn ,call)))
           (clgrpc.http2:with-connection-lock (,conn)
             (when (eq ,conn (call-conn ,call))
               (return-from ,block (progn ,@body)))))))))

(defmacro with-call-conn-lock-if-any ((call) &body body)
  "WITH-CALL-CONN-LOCK, or BODY alone while CALL is on no connection: a
client call not yet started, which no other thread sees."
  (let ((locked (gensym "LOCKED")))
    `(flet ((,locked () ,@body))
       (if (call-conn ,call)
           (with-call-conn-lock (,call) (,locked))
           (,locked)))))

(defmacro with-current-call-lock ((call) &body body)
  "BODY with the lock of CALL's connection held, returning its values.  A
client call whose stream the server refused unprocessed is first opened
again (transparent retry, client.lisp), so BODY sees the stream the call
is on now.  BODY must not wait for a retry itself."
  (let ((conn (gensym "CONN")) (block (gensym "CALL-LOCKED")) (locked (gensym "LOCKED")))
    ;; A server call never moves, and its path (once per message) returns
    ;; normally from the lock: a RETURN-FROM out of it would unwind.
    `(flet ((,locked () ,@body))
       (declare (inline ,locked))
       (if (eq (call-role ,call) :server)
           (clgrpc.http2:with-connection-lock ((call-conn ,call)) (,locked))
           (block ,block
             (loop
               (let ((,conn (call-conn ,call)))
                 (clgrpc.http2:with-connection-lock (,conn)
                   (unless (or (not (eq ,conn (call-conn ,call))) (call-retry-pending ,call))
                     (return-from ,block (,locked)))))
               (%retry-call-if-pending ,call)))))))

(defun %call-stalled (call)
  "Lock held: the peer opened no window and read nothing for the stall
timeout while CALL sent; its stream is reset, and the call fails."
  (unless (call-status call)
    (setf (call-status call) +unavailable+
          (call-status-message call) "sending stalled: the peer took nothing for the stall timeout")
    (%call-over call)
    (broadcast-if-waiting (call-waiters call) (call-cv call))))

(defun %call-ended-error (call)
  "Signal the GRPC-ERROR for a call that has ended (lock held)."
  (let ((code (or (call-status call) +cancelled+)))
    (error 'grpc-error :code (if (= code +ok+) +cancelled+ code)
                       :message (if (= code +ok+) "call already finished" (call-status-message call))
                       :metadata (call-trailers call)
                       :details (and (/= code +ok+) (call-status-details call)))))

(defun %kept-for-the-next-attempt-p (call)
  "Lock held: CALL's attempt ended while a message was being written, and
another attempt will send it again: the send did not fail."
  (and (eq (call-role call) :client) (null (call-status call)) (call-retry-pending call)
       (call-retry-policy call) (not (call-committed call))))

(defun call-send (call message &key (compress (call-compress call)))
  "Send MESSAGE on a streaming call.  Waits for flow-control window; the
frames are written by the connection's writer thread, batched with whatever
else is ready.  Signals GRPC-ERROR if the call has ended.  COMPRESS (by
default, as the call was set up) compresses this message, if the call's
headers declared gzip.  The call's message wrappers see it first
(CALL-WRAP-MESSAGES)."
  (if (call-send-wrappers call)
      (labels ((chain (wrappers message)
                 (if wrappers
                     (funcall (the function (first wrappers)) call message
                              (lambda (message) (chain (rest wrappers) message)))
                     (%call-send call message compress))))
        (chain (call-send-wrappers call) message)
        nil)
      (%call-send call message compress)))

(defun %call-send (call message compress)
  (let ((buf (encode-message-frame call message compress)))
    (with-current-call-lock (call)
      (let ((conn (call-conn call)))
        (when (or (call-status call) (call-send-closed call))
          (%call-ended-error call))
        (when (and (eq (call-role call) :server) (not (%send-response-headers call)))
          (%call-ended-error call))
        ;; Counted before the write: a message partly sent cannot be sent again.
        (incf (call-messages-sent call))
        (when (eq (call-role call) :client)
          (keep-for-retry call (obuf-data buf) (obuf-fill buf)))
        (let ((sent (clgrpc.http2:stream-write-data conn (call-stream call)
                                                    (obuf-data buf) 0 (obuf-fill buf))))
          (when (eq sent t)
            ;; The attempt's, as it went on its stream (metrics).
            (incf (call-attempt-octets-sent call) (- (obuf-fill buf) 5)))
          (unless (or (eq sent t) (%kept-for-the-next-attempt-p call))
            (when (eq sent :stalled)
              (%call-stalled call))
            (%call-ended-error call)))
        (clgrpc.http2:request-flush conn)))
    (release-large-scratch)
    nil))

(defun call-recv (call)
  "The next message from the peer, or NIL when it has finished sending
(on a client: the call ended with status OK).  Signals GRPC-ERROR when the
call ended otherwise (cancelled, deadline, error status), or when the
message cannot be decoded (the call then fails with that status).  The
call's message wrappers see it first (CALL-WRAP-MESSAGES)."
  (if (call-recv-wrappers call)
      (through-recv-wrappers call (lambda () (%call-recv call)))
      (%call-recv call)))

(defun through-recv-wrappers (call read)
  "What READ, a function of no arguments, reads from CALL, through the
call's receive wrappers."
  (labels ((chain (wrappers)
             (if wrappers
                 (funcall (the function (first wrappers)) call
                          (lambda () (chain (rest wrappers))))
                 (funcall read))))
    (chain (call-recv-wrappers call))))

(defun %call-recv (call &aux (conn (call-conn call)))
  (when (each-message-call-p call)
    (error "~A's handler is called per message (:each-message): it cannot call CALL-RECV"
           (call-path call)))
  (multiple-value-bind (octets length compressed)
      (with-current-call-lock (call)
        (loop
          (multiple-value-bind (octets length compressed) (%take-message call)
            (when octets
              (return (values octets length compressed))))
          (cond ((or (call-retry-pending call) (not (eq conn (call-conn call))))
                 ;; Moved by a transparent retry: wait on the new connection.
                 (return :retry))
                ((eq (call-role call) :client)
                 (when (call-status call)
                   (if (= (the fixnum (call-status call)) +ok+)
                       (return nil)
                       (%call-ended-error call))))
                ((call-status call) (%call-ended-error call))
                ((call-inbound-done call) (return nil)))
          (%start-reading call)
          (counted-wait ((call-waiters call))
            (wait-on (call-cv call) (clgrpc.http2:connection-lock conn)))))
    (cond ((eq octets :retry)
           (%retry-call-if-pending call)
           (%call-recv call))
          (octets
           (setf (call-last-compressed call) compressed)
           (%decode-or-fail call octets length compressed)))))

(defun %decode-or-fail (call octets length compressed)
  "The message decoded, outside the connection lock; if it cannot be, the
call fails with the decoder's status, which is signalled."
  (handler-case (decode-message call octets length compressed)
    (grpc-error (e)
      (with-call-conn-lock (call)
        (%fail-call call (grpc-error-code e) (grpc-error-message e)))
      (error e))))

(defun call-set-response-metadata (call metadata)
  "Server: custom metadata for the response HEADERS (before the first send)."
  (setf (call-%response-metadata call) metadata))

(defun call-set-trailer-metadata (call metadata)
  "Server: custom metadata for the trailers."
  (setf (call-trailer-metadata call) metadata))

(defun call-set-response-compression (call enable)
  "Server: compress the response messages with gzip if the client accepts
gzip; otherwise they go uncompressed.  Before the first send it decides the
response's grpc-encoding.  Once the response headers are out it can only
turn compression on or off within the encoding they declared (without gzip
declared, messages stay uncompressed); it never fails the call.
CALL-SEND's :COMPRESS still decides message by message."
  (let ((gzip (and enable (call-peer-accepts-gzip call) t)))
    (if (call-headers-sent call)
        (setf (call-compress call) (and gzip (call-send-gzip call)))
        (setf (call-send-gzip call) gzip
              (call-compress call) gzip))))

(defun call-send-headers (call)
  "Server: send the response HEADERS (with their metadata) now, before any
message."
  (let ((conn (call-conn call)))
    (clgrpc.http2:with-connection-lock (conn)
      (unless (call-status call)
        (%send-response-headers call)
        (clgrpc.http2:request-flush conn)))
    nil))
