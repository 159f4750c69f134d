;;;; The gRPC client's channel: where it connects (one HTTP/2 connection, or
;;;; one per address its balancer picks), reopened when the connection
;;;; closes or receives GOAWAY, with its keepalive, and the connection
;;;; backoff of a call that waits for ready.
;;;; The calls that share it are in client.lisp, how they end in
;;;; client-callbacks.lisp.

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

(declaim (ftype function balanced-connection note-connect-outcome %note-failure))

(defun channel-connection (channel &optional stale deadline)
  "A connection that can take new streams (not STALE, the one that just
could not): the channel's own, or, for a channel over several addresses,
one its load-balancing policy picks (balancer.lisp)."
  (if (channel-subchannels channel)
      (balanced-connection channel stale deadline)
      (direct-connection channel stale deadline)))

(defun direct-connection (channel &optional stale deadline heed-backoff)
  "CHANNEL's own connection, if it can take new streams (not STALE), or a
new one.  Connecting happens outside the channel's lock, bounded by
DEADLINE (NOW-US time, NIL for none); other callers wait for it.  A
connection replaced while still open (its stream identifiers ran out) is
sent GOAWAY, so it closes once its last stream ends.  With HEED-BACKOFF, a
channel whose last connect failed and whose backoff has not passed fails
the call (UNAVAILABLE) instead of connecting: a balancer that chose this
subchannel before another thread's attempt failed must not try again at
once."
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
                ((and (eq (channel-state channel) :transient-failure)
                      (or waited
                          (and heed-backoff (< (now-us) (channel-retry-after-us channel)))))
                 ;; The attempt this call waited for failed, or one before
                 ;; it did and its backoff has not passed: the call shares
                 ;; that outcome rather than trying again at once.
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

(defun channel-canonical-target (channel)
  "CHANNEL's target as gRPC names it canonically (dns:///host:port), or
its authority when it has none."
  (if (plusp (length (channel-target channel))) (channel-target channel) (channel-authority channel)))

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
