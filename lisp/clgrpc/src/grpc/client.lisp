;;;; The gRPC client: a channel (one HTTP/2 connection, reopened when it
;;;; closes or receives GOAWAY) and the four kinds of call.
;;;;
;;;; Calls from any number of threads share the connection as concurrent
;;;; streams.  A unary call writes HEADERS and its DATA in one lock hold and
;;;; one send(2), then waits on its own queue; the connection's reader thread
;;;; decodes the response and trailers and wakes it.  Deadlines are enforced
;;;; here too: the scheduler cancels the stream (RST_STREAM CANCEL) and ends
;;;; the call with DEADLINE_EXCEEDED, whatever the server does.

(in-package #:clgrpc.grpc)

(defstruct (channel (:constructor %make-channel))
  (host "127.0.0.1")
  (port 0 :type fixnum)
  (authority "" :type string)
  ;; The target as gRPC names it canonically (dns:///host:port), the
  ;; grpc.target of its metrics; "" for an address that is not a name.
  (target "" :type string)
  (lock (sb-thread:make-mutex :name "grpc channel") :type sb-thread:mutex)
  (conn nil)
  ;; A thread is connecting (outside LOCK); others wait on CV for it.
  (connecting nil)
  (cv (sb-thread:make-waitqueue :name "grpc channel") :type sb-thread:waitqueue)
  (max-receive-message-size 4194304 :type fixnum)
  (max-send-message-size most-positive-fixnum :type fixnum)
  (connection-options '() :type list)
  ;; A clgrpc.tls client context, and the name the server's certificate
  ;; must carry: every connection speaks TLS.
  (tls nil :type (or null clgrpc.tls:tls-context))
  (server-name nil :type (or null string))
  ;; gRPC's service config (service-config.lisp), or NIL.
  (service-config nil :type (or null service-config))
  ;; Client keepalive (gRFC A8): ping after this long without reading
  ;; (NIL: never), doubled each time a server says too_many_pings; close
  ;; if the ACK takes longer than the timeout.
  (keepalive-time-us nil :type (or null fixnum))
  (keepalive-timeout-us 20000000 :type fixnum)
  (keepalive-without-calls nil)
  ;; Wrapped around every call (interceptors.lisp).
  (interceptors '() :type list)
  ;; A channel over several addresses: one channel each (its
  ;; subchannels), and the policy that picks among them (balancer.lisp).
  (subchannels nil :type (or null simple-vector))
  (lb-policy :pick-first :type (member :pick-first :round-robin))
  (next-pick 0 :type sb-ext:word)
  ;; Resolving its name again (resolver.lisp): a function of no arguments
  ;; giving the addresses (NIL for literal ones), one making a subchannel
  ;; for an address, and the subchannels of addresses no longer listed.
  (re-resolve nil :type (or null function))
  (subchannel-maker nil :type (or null function))
  (shuffle-addresses nil)
  (resolving nil)
  (resolved-at-us 0 :type fixnum)
  (retired '() :type list)
  ;; A subchannel's connectivity: :IDLE, :CONNECTING, :READY or
  ;; :TRANSIENT-FAILURE, and its reconnect backoff (balancer.lisp).
  (state :idle)
  (last-failure "" :type string)        ; why its last connect failed
  (backoff-us 0 :type fixnum)
  (retry-after-us 0 :type fixnum)
  ;; A weak pointer to the last connection whose too_many_pings doubled it.
  (heeded-goaway-conn nil)
  (closed nil))

(defparameter *connect-timeout* 20
  "Seconds one connection attempt may take when the call has no sooner
deadline: grpc-go's minimum connect timeout.  The kernel would otherwise
retry an unanswered SYN for about two minutes.")

(defparameter *client-keepalive-floor* 10
  "The shortest keepalive time a channel uses, in seconds: grpc-go's
floor, which spares servers pings they would count as abuse.  Tests lower
it.")

(defun %client-limits (channel)
  "The limits of CHANNEL's next connection: it waits for a server's
message as long as its call may, for the server's SETTINGS as long as a
connect may take (*CONNECT-TIMEOUT*), and pings as the channel's
keepalive says."
  (clgrpc.http2:make-connection-limits :handshake-timeout (round (* *connect-timeout* 1000000))
                                       :receive-stall-timeout nil
                                       :keepalive-time (channel-keepalive-time-us channel)
                                       :keepalive-timeout (channel-keepalive-timeout-us channel)
                                       :permit-without-stream (channel-keepalive-without-calls channel)))

(defconstant +too-many-pings-max-keepalive-us+ (* 7200 1000000)
  "Doubling for too_many_pings stops here (a server's default, two hours).")

(defun %heed-too-many-pings (channel conn)
  "Channel lock held: CONN, being replaced, ended with the server's GOAWAY
ENHANCE_YOUR_CALM too_many_pings: the channel pings half as often from
now on, as grpc-go does."
  (multiple-value-bind (code debug) (clgrpc.http2:connection-peer-goaway conn)
    (let ((time (channel-keepalive-time-us channel)))
      (when (and time (eql code clgrpc.http2:+enhance-your-calm+) (string= debug "too_many_pings")
                 ;; Once for each such connection, however often it is replaced.
                 (let ((heeded (channel-heeded-goaway-conn channel)))
                   (not (and heeded (eq conn (sb-ext:weak-pointer-value heeded))))))
        (setf (channel-heeded-goaway-conn channel) (sb-ext:make-weak-pointer conn))
        (setf (channel-keepalive-time-us channel)
              (max time (min +too-many-pings-max-keepalive-us+ (* 2 time))))
        (log-line "~A said too_many_pings; keepalive time now ~,1F s"
                  (channel-authority channel) (/ (channel-keepalive-time-us channel) 1d6))))))

(defun make-channel (host port &key (max-receive-message-size 4194304)
                                    (max-send-message-size most-positive-fixnum)
                                    (initial-window-size 1048576)
                                    (connection-window-size 4194304)
                                    tls server-name service-config
                                    keepalive-time (keepalive-timeout 20) keepalive-without-calls
                                    interceptors)
  "A channel to HOST:PORT.  Connects on first use.  TLS, a client context
of clgrpc.tls:make-client-context, makes it connect over TLS (ALPN h2);
the server's certificate must then name SERVER-NAME (gRPC's
server_host_override, also the calls' :authority), or HOST when that is
NIL.  SERVICE-CONFIG, gRPC's JSON service config (a string) or one
PARSE-SERVICE-CONFIG made, sets methods' timeouts, wait-for-ready, message
size limits and retry policies; an invalid one signals
SERVICE-CONFIG-ERROR here.

KEEPALIVE-TIME (seconds, at least *CLIENT-KEEPALIVE-FLOOR*; NIL, the
default, for none) pings the server after that long without hearing from
it while calls are open (and without calls too, given
KEEPALIVE-WITHOUT-CALLS); a ping not answered within KEEPALIVE-TIMEOUT
closes the connection, failing its calls with UNAVAILABLE.  A server's
GOAWAY too_many_pings doubles the time.

INTERCEPTORS, functions (interceptor info next), wrap every call, the
first outermost (interceptors.lisp)."
  (when (stringp service-config)
    (setf service-config (parse-service-config service-config)))
  (check-type service-config (or null service-config))
  (when tls
    (check-type tls clgrpc.tls:tls-context)
    (unless (eq (clgrpc.tls:tls-context-role tls) :client)
      (error "make-channel: TLS needs a client context")))
  (%make-channel :host host :port port :tls tls :service-config service-config
                 :interceptors interceptors
                 :keepalive-time-us (and keepalive-time
                                         (round (* 1000000 (max keepalive-time *client-keepalive-floor*))))
                 :keepalive-timeout-us (round (* 1000000 keepalive-timeout))
                 :keepalive-without-calls (and keepalive-without-calls t)
                 :server-name (or server-name (and tls (princ-to-string host)))
                 :authority (or server-name (format nil "~A:~D" host port))
                 :target (if (stringp host)
                             (format nil (if (find #\: host) "dns:///[~A]:~D" "dns:///~A:~D") host port)
                             "")
                 :max-receive-message-size max-receive-message-size
                 :max-send-message-size max-send-message-size
                 :connection-options (list :initial-window-size initial-window-size
                                           :connection-window-size connection-window-size)))

(defun channel-close (channel)
  "Close the channel's connection (or its subchannels'); calls in flight
fail with UNAVAILABLE."
  (mapc #'channel-close
        (sb-thread:with-mutex ((channel-lock channel))
          ;; Closed first, so that no resolution adds subchannels after.
          (setf (channel-closed channel) t)
          (append (coerce (or (channel-subchannels channel) #()) 'list) (channel-retired channel))))
  (let ((conn (sb-thread:with-mutex ((channel-lock channel))
                (setf (channel-closed channel) t)
                ;; Calls waiting for a connection fail now; the one
                ;; connecting abandons its attempt within a tenth of a
                ;; second (CHANNEL-CONNECTION).
                (sb-thread:condition-broadcast (channel-cv channel))
                (shiftf (channel-conn channel) nil))))
    (when conn
      (clgrpc.http2:connection-close conn)
      (clgrpc.http2:connection-wait-closed conn 5))
    nil))

(declaim (ftype function client-on-headers client-on-data client-on-reset))

(defun %usable-p (conn stale)
  (and conn (not (eq conn stale))
       (not (clgrpc.http2:connection-closed-p conn))
       (not (clgrpc.http2:connection-goaway-received-p conn))
       (not (clgrpc.http2:connection-goaway-sent-p conn))))

(defun %new-tls-session (channel)
  "A TLS session for a new connection of CHANNEL, or NIL over plaintext;
made before connecting, so that a bad server name fails the call at once
(UNAVAILABLE) with nothing to release."
  (let ((context (channel-tls channel)))
    (and context
         (handler-case (clgrpc.tls:make-tls-session context :server-name (channel-server-name channel))
           (clgrpc.tls:tls-error (e)
             (raise-grpc-error +unavailable+ "~A" e))))))

(declaim (ftype function balanced-connection note-connect-outcome %note-failure hedged-unary-call))

(defun channel-connection (channel &optional stale deadline)
  "A connection that can take new streams (not STALE, the one that just
could not): the channel's own, or, for a channel over several addresses,
one its load-balancing policy picks (balancer.lisp)."
  (if (channel-subchannels channel)
      (balanced-connection channel stale deadline)
      (direct-connection channel stale deadline)))

(defun direct-connection (channel &optional stale deadline)
  "CHANNEL's own connection, if it can take new streams (not STALE), or a
new one.  Connecting happens outside the channel's lock, bounded by
DEADLINE (NOW-US time, NIL for none); other callers wait for it.  A
connection replaced while still open (its stream identifiers ran out) is
sent GOAWAY, so it closes once its last stream ends."
  (let ((lock (channel-lock channel))
        (retired nil)
        (waited nil))
    (sb-thread:with-mutex (lock)
      (loop
        (when (channel-closed channel)
          (raise-grpc-error +unavailable+ "channel closed"))
        (let ((conn (channel-conn channel)))
          (cond ((%usable-p conn stale)
                 (return-from direct-connection conn))
                ((and waited (eq (channel-state channel) :transient-failure))
                 ;; The attempt this call waited for failed: it shares that
                 ;; outcome rather than trying again at once.
                 (raise-grpc-error +unavailable+ "cannot connect to ~A: ~A" (channel-authority channel)
                                   (channel-last-failure channel)))
                ((not (channel-connecting channel))
                 (when (and conn (not (clgrpc.http2:connection-peer-settings-seen-p conn))
                            (eq (channel-state channel) :ready))
                   ;; Connected, but closed before the server's SETTINGS: not
                   ;; a server to send to.  Its backoff goes on, and this
                   ;; call fails as if the connect had.
                   (%note-failure channel (or (clgrpc.http2:connection-close-reason conn)
                                              "closed before the server's SETTINGS"))
                   (raise-grpc-error +unavailable+ "cannot connect to ~A: ~A" (channel-authority channel)
                                     (channel-last-failure channel)))
                 (setf (channel-connecting channel) t
                       (channel-state channel) :connecting
                       retired (and conn (not (clgrpc.http2:connection-closed-p conn)) conn))
                 (when conn
                   (%heed-too-many-pings channel conn))
                 (return))
                ((not (setf waited (wait-on (channel-cv channel) lock deadline)))
                 (raise-grpc-error +deadline-exceeded+ "deadline exceeded while connecting to ~A"
                                   (channel-authority channel)))))))
    (when retired
      (clgrpc.http2:connection-send-goaway retired))
    (let ((conn nil) (orphan nil) (tls nil) (socket nil)
          ;; Set when the attempt ended only because this call's deadline
          ;; bounded it: not a failure of the server, so the calls waiting
          ;; for it try again within their own deadlines.
          (abandoned nil))
      (unwind-protect
           (let* ((left (and deadline (max 0 (/ (- deadline (now-us)) 1d6))))
                  ;; The call's deadline bounds the attempt when it is sooner;
                  ;; then a timeout is that deadline passing.
                  (deadline-bound (and left (<= left *connect-timeout*))))
             (setf tls (%new-tls-session channel)
                   socket (handler-case
                              (clgrpc.net:tcp-connect (channel-host channel) (channel-port channel)
                                                      (if deadline-bound left *connect-timeout*)
                                                      (lambda () (channel-closed channel)))
                            (clgrpc.net:connect-aborted ()
                              (raise-grpc-error +unavailable+ "channel closed"))
                            (error (e)
                              (setf abandoned (and (typep e 'clgrpc.net:connect-timeout) deadline-bound))
                              (unless abandoned
                                (sb-thread:with-mutex (lock)
                                  (setf (channel-last-failure channel) (princ-to-string e))))
                              (raise-grpc-error (if abandoned +deadline-exceeded+ +unavailable+)
                                                "cannot connect to ~A: ~A" (channel-authority channel) e))))
             (setf conn (handler-case
                            (clgrpc.http2:connection-start
                             (apply #'clgrpc.http2:make-connection socket :client
                                    :on-headers #'client-on-headers :on-data #'client-on-data
                                    :on-reset #'client-on-reset :user channel :tls tls
                                    :limits (%client-limits channel)
                                    (channel-connection-options channel)))
                          ;; The ClientHello could not be made: nothing was sent.
                          (clgrpc.tls:tls-error (e)
                            (raise-grpc-error +unavailable+ "~A" e)))))
        ;; Whatever ended the attempt before a connection took them (an
        ;; error, the channel closing, a non-local exit) releases them.
        (unless conn
          (when socket (clgrpc.net:socket-close socket))
          (when tls (clgrpc.tls:session-free tls)))
        (sb-thread:with-mutex (lock)
          (setf (channel-connecting channel) nil)
          (when conn
            (if (channel-closed channel)
                (setf orphan conn)
                (setf (channel-conn channel) conn)))
          (if (and abandoned (not conn))
              (setf (channel-state channel) :idle)
              (note-connect-outcome channel (and conn t)))
          (sb-thread:condition-broadcast (channel-cv channel))))
      (when orphan
        ;; The channel was closed while this connected.
        (clgrpc.http2:connection-close orphan)
        (raise-grpc-error +unavailable+ "channel closed"))
      conn)))

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

(defun call-cancel (call)
  "Cancel a client call: RST_STREAM CANCEL, status CANCELLED."
  (let ((conn (call-conn call)))
    (when conn
      (with-call-conn-lock (call)
        (when (eq (call-retry-pending call) t)
          (setf (call-retry-pending call) nil))
        (%client-fail call +cancelled+ "cancelled")))
    nil))

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

;;; ------------------------------------------------------------------
;;; Starting calls

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

(defconstant +connect-backoff-us+ 1000000
  "gRPC's connection backoff (doc/connection-backoff.md): the first wait
before connecting again; each next one is 1.6 times longer, at most
+MAX-CONNECT-BACKOFF-US+, and each is jittered by 20%.")
(defconstant +max-connect-backoff-us+ 120000000)

(defun %call-connection (call stale)
  "CHANNEL-CONNECTION's connection for CALL.  A call that waits for ready
rides out failures to connect (UNAVAILABLE), trying again after gRPC's
connection backoff until its deadline passes or the channel closes."
  (let ((channel (call-channel call))
        (deadline (call-%deadline call))
        (backoff-us +connect-backoff-us+))
    (loop
      (handler-case (return (channel-connection channel stale deadline))
        (grpc-error (e)
          (unless (and (call-wait-for-ready call) (= (grpc-error-code e) +unavailable+))
            (error e))
          (let ((wake (+ (now-us) (round (* backoff-us (+ 0.8d0 (jitter-random 0.4d0)))))))
            (loop until (or (>= (now-us) wake) (call-status call) (channel-closed channel)
                            (and deadline (>= (now-us) deadline)))
                  do (sleep (/ (min 50000 (max 1 (- wake (now-us)))) 1d6)))
            (when (or (call-status call) (channel-closed channel))
              (error e))
            (when (and deadline (>= (now-us) deadline))
              (raise-grpc-error +deadline-exceeded+ "deadline exceeded waiting for the channel: ~A"
                                (grpc-error-message e))))
          (setf backoff-us (min +max-connect-backoff-us+ (round (* backoff-us 1.6d0)))))))))

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

(defun channel-canonical-target (channel)
  "CHANNEL's target as gRPC names it canonically (dns:///host:port), or
its authority when it has none."
  (if (plusp (length (channel-target channel))) (channel-target channel) (channel-authority channel)))

(defun call-channel-target (call)
  "Client: the target CALL's channel calls, as gRPC names it canonically
(dns:///host:port, ipv4:..., unix:...): the grpc.target of gRPC's metrics."
  (let ((channel (call-channel call)))
    (and channel (channel-canonical-target channel))))
