;;;; The gRPC client's calls: starting the four kinds of call on a channel
;;;; (channel.lisp), retrying them, and waiting for their status.
;;;;
;;;; Calls from any number of threads share the connection as concurrent
;;;; streams.  A unary call writes HEADERS and its DATA in one lock hold and
;;;; one send(2), then waits on its own queue; the connection's reader thread
;;;; decodes the response and trailers and wakes it (client-callbacks.lisp).
;;;; Deadlines are enforced on this side too: a timer set when the call
;;;; starts cancels the stream (RST_STREAM CANCEL) and ends the call with
;;;; DEADLINE_EXCEEDED, whatever the server does.

(in-package #:clgrpc.grpc)

(declaim (ftype function hedged-unary-call))

(defun request-headers (channel call deadline metadata)
  (list* '(":method" . "POST") (if (channel-tls channel) '(":scheme" . "https") '(":scheme" . "http"))
         (cons ":path" (call-path call))
         (cons ":authority" (channel-authority channel))
         '("content-type" . "application/grpc")
         '("te" . "trailers")
         '("user-agent" . "grpc-common-lisp/clgrpc")
         (cons "grpc-accept-encoding" +accepted-encodings+)
         (nconc (when (call-send-gzip call)
                  (list '("grpc-encoding" . "gzip")))
                (when deadline
                  ;; Not indexed: every call has a different value.
                  (list (list "grpc-timeout" (format-grpc-timeout (- deadline (now-us))) :without)))
                (let ((previous (+ (call-retries call) (call-previous-attempts call))))
                  (when (plusp previous)
                    (list (cons "grpc-previous-rpc-attempts" (princ-to-string previous)))))
                (when metadata
                  (metadata-to-headers
                   (if (plusp (+ (call-retries call) (call-previous-attempts call)))
                       ;; Ours, above, is the one the server gets.
                       (remove "grpc-previous-rpc-attempts" metadata :key #'car :test #'string-equal)
                       metadata))))))

(defun start-call (channel path kind encoder decoder timeout metadata request compress
                   wait-for-ready &optional finish-hooks (previous-attempts 0) attempt-hooks)
  "Open the stream and send HEADERS (and REQUEST, half-closing, if given).
COMPRESS declares gzip and compresses the messages (CALL-SEND's :COMPRESS
can still send one uncompressed).  The channel's service config for PATH
shortens TIMEOUT and the message size limits, sets WAIT-FOR-READY when the
call leaves it NIL, and gives the call its retry policy.  FINISH-HOOKS
are called when the call ends, ATTEMPT-HOOKS as each attempt starts
(interceptors.lisp).  PREVIOUS-ATTEMPTS counts the hedges sent before
this one (hedging.lisp)."
  (let* ((config (method-config-for (channel-service-config channel) path))
         (timeout (let ((configured (and config (method-config-timeout config))))
                    (if (and timeout configured) (min timeout configured) (or timeout configured))))
         (deadline (and timeout (+ (now-us) (max 1 (round (* timeout 1000000))))))
         (call (%make-call :role :client :kind kind :path path :channel channel
                           :send-gzip (and compress t) :compress (and compress t)
                           :encoder encoder :decoder decoder
                           :max-receive-size (%configured-limit (channel-max-receive-message-size channel)
                                                                config #'method-config-max-response-size)
                           :max-send-size (%configured-limit (channel-max-send-message-size channel)
                                                             config #'method-config-max-request-size)
                           :retry-policy (and config (method-config-retry-policy config))
                           :retry-throttle (let ((service-config (channel-service-config channel)))
                                             (and service-config (service-config-throttle service-config)))
                           :wait-for-ready (if (null wait-for-ready)
                                               (and config (method-config-wait-for-ready config))
                                               (eq wait-for-ready t))
                           :finish-hooks (reverse finish-hooks)
                           :attempt-hooks attempt-hooks
                           :previous-attempts previous-attempts
                           :%metadata metadata :%deadline deadline)))
    (when request
      (let ((buf (encode-message-frame call request)))
        (setf (call-request-octets call) (subseq (obuf-data buf) 0 (obuf-fill buf)))))
    ;; Waiting for a connection and a stream slot is bounded by DEADLINE
    ;; there; the timer covers the attempts once the call has a stream.
    (handler-case (%open-call-stream call nil)
      (error (e)
        ;; No call to return: its first attempt ends with the error.
        (with-call-conn-lock-if-any (call)
          (end-attempt call (if (typep e 'grpc-error) (grpc-error-code e) +unavailable+)))
        (error e)))
    (when deadline
      (setf (call-timer call) (schedule-timer #'client-deadline-expired call deadline)))
    call))

(defun %configured-limit (limit config accessor)
  (let ((configured (and config (funcall accessor config))))
    (if configured (min limit configured) limit)))

(defun %open-call-stream (call stale)
  "Open a stream for CALL on a connection of its channel (not STALE) and
send its HEADERS, and its request if it has one (half-closing).  Tries a
new connection when one can take no more streams."
  (let* ((channel (call-channel call))
         (deadline (call-%deadline call))
         (headers (request-headers channel call deadline (call-%metadata call)))
         (octets (call-request-octets call))
         (conn stale))
    (with-call-conn-lock-if-any (call)
      (begin-attempt call))
    (loop repeat 3
          do (setf conn (%call-connection call conn))
             (clgrpc.http2:with-connection-lock (conn)
               (unless (clgrpc.http2:header-list-fits-p conn headers)
                 (raise-grpc-error +internal+ "request header list of ~D octets exceeds the server's limit of ~D"
                                   (clgrpc.http2:header-list-size headers)
                                   (clgrpc.http2:connection-peer-max-header-list-size conn)))
               (when (call-status call)
                 ;; Ended (cancelled, past its deadline) while it was being retried.
                 (return-from %open-call-stream nil))
               (let ((stream (%open-stream-unless-ended conn call deadline)))
                 (case stream
                   (:ended (return-from %open-call-stream nil))
                   (:timeout
                    ;; The deadline covers the wait for a stream slot too.
                    (raise-grpc-error +deadline-exceeded+
                                      "deadline exceeded waiting for a stream slot")))
                 (when stream
                   ;; A retry stays pending (:IN-PROGRESS) until what the
                   ;; call sent before is sent again, so no new message
                   ;; overtakes it (%RETRY-CALL).
                   (setf (call-conn call) conn
                         (call-stream call) stream
                         (call-headers-sent call) t)
                   (clgrpc.http2:stream-write-headers conn stream headers)
                   (%write-request conn stream call octets)
                   (when (call-status call)
                     ;; Cancelled while the retry moved it here: the new
                     ;; stream goes too.
                     (clgrpc.http2:stream-reset conn stream clgrpc.http2:+cancel+))
                   (return)))))
    (unless (and (call-stream call) (eq (call-conn call) conn))
      ;; A connection that failed its TLS handshake says why.
      (raise-grpc-error +unavailable+ "~A" (or (and conn (clgrpc.http2:connection-close-reason conn))
                                               "no connection could take the call")))
    (clgrpc.http2:flush-connection conn)))

(defun %open-stream-unless-ended (conn call deadline)
  "Lock held: CLGRPC.HTTP2:OPEN-STREAM for CALL, waiting for a stream slot
until DEADLINE in tenths of a second, so that a call cancelled meanwhile
(under the lock of the connection it was on) stops waiting: :ENDED then."
  (loop
    (when (call-status call)
      (return :ended))
    (let* ((slice (+ (now-us) 100000))
           (stream (clgrpc.http2:open-stream conn call (if deadline (min deadline slice) slice))))
      (unless (and (eq stream :timeout) (or (null deadline) (< (now-us) deadline)))
        (return stream)))))

(defun %write-request (conn stream call octets)
  "Lock held: on CALL's new STREAM, its request OCTETS (half-closing), or
the messages it kept for a retry and its half-close, if it had sent one."
  (flet ((send (data end-stream)
           (when (plusp (length data))
             (incf (call-attempt-octets-sent call) (- (length data) 5)))
           (let ((sent (clgrpc.http2:stream-write-data conn stream data 0 (length data)
                                                       :end-stream end-stream)))
             (when (eq sent :stalled)
               (%call-stalled call))
             (eq sent t))))
    (if octets
        (progn (setf (call-send-closed call) t)
               (send octets t))
        (and (every (lambda (message) (send message nil)) (reverse (call-replay call)))
             (or (not (call-send-closed call))
                 (send +no-octets+ t))))))

(defun %wait-to-retry (call at)
  "Wait until AT (NOW-US time) to try CALL again, or until it ends; if its
channel closes meanwhile, it ends with UNAVAILABLE."
  (with-call-conn-lock (call)
    (loop until (or (call-status call) (>= (now-us) at))
          do (when (channel-closed (call-channel call))
               (%client-complete call +unavailable+ "channel closed" nil)
               (return))
             (counted-wait ((call-waiters call))
               ;; In tenths of a second, to see the channel close.
               (wait-on (call-cv call) (clgrpc.http2:connection-lock (call-conn call))
                        (min at (+ (now-us) 100000)))))))

(defun %retry-call (call at)
  "Make CALL's next attempt, at AT (NOW-US time) or at once when NIL: open
it again on a connection that can take it (the same one, after
REFUSED_STREAM; a new one after GOAWAY) and send again what it sent.
Whatever happens, the call leaves the retrying state, unless the new
attempt already ended and asked for another."
  (unwind-protect
       (handler-case (progn
                       (when at
                         (%wait-to-retry call at))
                       (unless (call-status call)
                         (%open-call-stream call nil)))
         (error (e)
           (with-call-conn-lock (call)
             (%client-complete call (if (typep e 'grpc-error) (grpc-error-code e) +unavailable+)
                               (if (typep e 'grpc-error) (grpc-error-message e) (princ-to-string e))
                               nil))))
    (with-call-conn-lock (call)
      (when (eq (call-retry-pending call) :in-progress)
        (setf (call-retry-pending call) nil)))
    ;; Waiters may sit on the old connection's lock: wake them all.
    (sb-thread:condition-broadcast (call-cv call))))

(defun %retry-call-if-pending (call)
  "Carry out CALL's pending retry, or wait briefly while another thread
of the call does."
  (let ((claimed nil)
        (at nil)
        (conn (call-conn call)))
    (clgrpc.http2:with-connection-lock (conn)
      (case (call-retry-pending call)
        ((t) (setf (call-retry-pending call) :in-progress
                   claimed t
                   at (shiftf (call-retry-at call) nil))
         (incf (call-attempts call))
         (when at
           (incf (call-retries call))))
        ;; Not counted among the call's waiters: the count belongs to the
        ;; lock of the connection the call is on, which is changing.
        (:in-progress
         (wait-on (call-cv call) (clgrpc.http2:connection-lock conn) (+ (now-us) 10000)))))
    (when claimed
      (%retry-call call at))))

(defun await-status (call &aux (conn (call-conn call)))
  "Wait for the call's status; with OK, the one response message, decoded."
  (multiple-value-bind (octets length compressed)
      (with-current-call-lock (call)
        (loop until (or (call-status call) (call-retry-pending call) (not (eq conn (call-conn call))))
              do (%start-reading call)
                 (counted-wait ((call-waiters call))
                   (wait-on (call-cv call) (clgrpc.http2:connection-lock conn))))
        (cond ((or (call-retry-pending call) (not (eq conn (call-conn call)))) :retry)
              ((/= (the fixnum (call-status call)) +ok+) (%call-ended-error call))
              (t (%take-message call))))
    (cond ((eq octets :retry)
           (%retry-call-if-pending call)
           (await-status call))
          ((null octets)
           (raise-grpc-error +internal+ "no response message"))
          (t
           (setf (call-last-compressed call) compressed)
           (%decode-or-fail call octets length compressed)))))

(defmacro with-client-interceptors ((channel path kind metadata timeout hooks attempt-hooks request)
                                    &body body)
  "BODY, which makes a call with METADATA, TIMEOUT, finish functions HOOKS,
attempt functions ATTEMPT-HOOKS and REQUEST (variables it sees rebound as
the channel's interceptors left them; REQUEST is NIL for a call whose
client streams), through those interceptors; without any, BODY at once."
  (let ((perform (gensym "PERFORM"))
        (request-var (or request (gensym "NO-REQUEST"))))
    `(flet ((,perform (,metadata ,timeout ,hooks ,attempt-hooks ,request-var)
              (declare (ignorable ,request-var))
              ,@body))
       (if (channel-interceptors ,channel)
           (run-client-interceptors (channel-interceptors ,channel)
                                    (make-call-info ,path ,kind ,metadata ,timeout
                                                    (channel-canonical-target ,channel) ,request)
                                    #',perform)
           (,perform ,metadata ,timeout nil nil ,request)))))

(defun unary-call (channel path request &key (encoder #'raw-encoder) (decoder #'raw-decoder)
                                             timeout metadata compress wait-for-ready)
  "Call the unary method PATH with REQUEST.  Returns (values response call);
signals GRPC-ERROR for any status but OK.  TIMEOUT is in seconds; COMPRESS
sends the request gzip-compressed.  WAIT-FOR-READY T makes the call wait
(until its deadline) for a connection that cannot be made yet instead of
failing with UNAVAILABLE, :FALSE makes it fail so whatever the channel's
service config says, and NIL leaves it to that config."
  (with-client-interceptors (channel path :unary metadata timeout hooks attempt-hooks request)
    (let* ((config (method-config-for (channel-service-config channel) path))
           (hedging (and config (method-config-hedging-policy config))))
      (if hedging
          (hedged-unary-call channel path request hedging encoder decoder
                             (let ((configured (method-config-timeout config)))
                               (if (and timeout configured) (min timeout configured) (or timeout configured)))
                             metadata compress wait-for-ready hooks attempt-hooks)
          (let ((call (start-call channel path :unary encoder decoder timeout metadata request compress
                                  wait-for-ready hooks 0 attempt-hooks)))
            (values (await-status call) call))))))

(defun server-streaming-call (channel path request &key (encoder #'raw-encoder)
                                                       (decoder #'raw-decoder) timeout metadata
                                                       compress wait-for-ready)
  "Start a server-streaming call; read responses with CALL-RECV until NIL.
The keywords are UNARY-CALL's."
  (with-client-interceptors (channel path :server-streaming metadata timeout hooks attempt-hooks
                            request)
    (start-call channel path :server-streaming encoder decoder timeout metadata request compress
                wait-for-ready hooks 0 attempt-hooks)))

(defun client-streaming-call (channel path &key (encoder #'raw-encoder) (decoder #'raw-decoder)
                                               timeout metadata compress wait-for-ready)
  "Start a client-streaming call: CALL-SEND requests, then CALL-CLOSE-AND-RECV.
The keywords are UNARY-CALL's."
  (with-client-interceptors (channel path :client-streaming metadata timeout hooks attempt-hooks nil)
    (start-call channel path :client-streaming encoder decoder timeout metadata nil compress
                wait-for-ready hooks 0 attempt-hooks)))

(defun bidi-streaming-call (channel path &key (encoder #'raw-encoder) (decoder #'raw-decoder)
                                             timeout metadata compress wait-for-ready)
  "Start a bidi call: CALL-SEND, CALL-RECV, CALL-CLOSE-SEND in any order.
The keywords are UNARY-CALL's."
  (with-client-interceptors (channel path :bidi metadata timeout hooks attempt-hooks nil)
    (start-call channel path :bidi encoder decoder timeout metadata nil compress wait-for-ready
                hooks 0 attempt-hooks)))

(defun call-close-send (call)
  "Half-close: tell the server no more messages are coming."
  (with-current-call-lock (call)
    (unless (or (call-send-closed call) (call-status call))
      (setf (call-send-closed call) t)
      (when (eq :stalled (clgrpc.http2:stream-write-data (call-conn call) (call-stream call)
                                                         +no-octets+ 0 0 :end-stream t))
        (%call-stalled call))))
  (clgrpc.http2:flush-connection (call-conn call))
  nil)

(defun call-close-and-recv (call)
  "Client streaming: half-close and return the single response, through
the call's receive wrappers."
  (call-close-send call)
  (if (call-recv-wrappers call)
      (through-recv-wrappers call (lambda () (await-status call)))
      (await-status call)))

(defun call-channel-target (call)
  "Client: the target CALL's channel calls, as gRPC names it canonically
(dns:///host:port, ipv4:..., unix:...): the grpc.target of gRPC's metrics."
  (let ((channel (call-channel call)))
    (and channel (channel-canonical-target channel))))

(defun call-cancel (call)
  "Cancel a client call: RST_STREAM CANCEL, status CANCELLED."
  (let ((conn (call-conn call)))
    (when conn
      (with-call-conn-lock (call)
        (when (eq (call-retry-pending call) t)
          (setf (call-retry-pending call) nil))
        (%client-fail call +cancelled+ "cancelled")))
    nil))
