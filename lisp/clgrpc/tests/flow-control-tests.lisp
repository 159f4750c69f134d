;;;; Ordinary traffic that must never hang: flow control that follows what
;;;; the application reads, output that a slow or absent reader bounds,
;;;; handler pools that no single peer can take, and shutdown that keeps
;;;; its deadline.

(in-package #:clgrpc.tests)

(def-suite :clgrpc.flow-control :in :clgrpc)
(in-suite :clgrpc.flow-control)

(defun call-path (method) (concatenate 'string "/test.Svc/" method))

(defun within (seconds thunk)
  "Run THUNK on a thread; its values, or :HUNG if it has not returned after
SECONDS (the thread is then left to its own deadline)."
  (let* ((result :hung)
         (thread (sb-thread:make-thread
                  (lambda () (setf result (handler-case (multiple-value-list (funcall thunk))
                                            (error (e) (list :error (princ-to-string e)))))))))
    (if (eq :timeout (sb-thread:join-thread thread :default :timeout :timeout seconds))
        :hung
        result)))

(test small-messages-then-one-larger-than-the-window-left
  ;; Ten 20,000-octet messages use a fifth of the 1 MiB stream window, too
  ;; little to be returned at once; a 900,000-octet message then needs more
  ;; than is left.  Window must go back as the application reads it, on both
  ;; sides (the server reads requests, the client reads echoes).
  (with-grpc (ch)
    (let ((result (within 10 (lambda ()
                               (let ((call (clgrpc.grpc:bidi-streaming-call ch (call-path "Chat") :timeout 15)))
                                 (dotimes (i 10)
                                   (clgrpc.grpc:call-send call (filled 20000 i))
                                   (assert (= 20000 (length (clgrpc.grpc:call-recv call)))))
                                 (clgrpc.grpc:call-send call (filled 900000 7))
                                 (prog1 (length (clgrpc.grpc:call-recv call))
                                   (clgrpc.grpc:call-close-send call)
                                   (clgrpc.grpc:call-recv call)))))))
      (is (equal '(900000) result))))
  (with-grpc (ch)
    (let ((result (within 10 (lambda ()
                               (let ((call (clgrpc.grpc:client-streaming-call ch (call-path "Sum") :timeout 15)))
                                 (dotimes (i 10) (clgrpc.grpc:call-send call (filled 20000 1)))
                                 (clgrpc.grpc:call-send call (filled 900000 1))
                                 (clgrpc.grpc:call-close-and-recv call))))))
      ;; 1,100,000 = #x10C8E0
      (is (equalp (list (bytes #xE0 #xC8 #x10)) result)))))

(test many-streams-of-small-then-large-messages
  (with-grpc (ch)
    (let* ((results (make-array 20 :initial-element :hung))
           (threads (loop for k below 20
                          collect (let ((k k))
                                    (sb-thread:make-thread
                                     (lambda ()
                                       (setf (aref results k)
                                             (handler-case
                                                 (let ((call (clgrpc.grpc:bidi-streaming-call ch (call-path "Chat") :timeout 20)))
                                                   (dotimes (i 10)
                                                     (clgrpc.grpc:call-send call (filled 20000 i))
                                                     (clgrpc.grpc:call-recv call))
                                                   (clgrpc.grpc:call-send call (filled 900000 7))
                                                   (prog1 (length (clgrpc.grpc:call-recv call))
                                                     (clgrpc.grpc:call-close-send call)))
                                               (error (e) (princ-to-string e))))))))))
      (dolist (th threads) (sb-thread:join-thread th :default nil :timeout 25))
      (is (every (lambda (r) (eql r 900000)) results) "~S" results))))

(test unread-messages-hold-the-sender
  ;; The handler takes one message and then reads nothing: the client may
  ;; get about one stream window (1 MiB) of 2 MiB messages past the first
  ;; into the server, no more, however large the messages are.
  (with-grpc (ch)
    (let* ((call (clgrpc.grpc:bidi-streaming-call ch (call-path "ReadOneThenSleep") :timeout 10))
           (sent 0)
           (sender (sb-thread:make-thread
                    (lambda ()
                      (ignore-errors
                       (dotimes (i 10)
                         (clgrpc.grpc:call-send call (filled (* 2 1024 1024) i))
                         (incf sent)))))))
      (is (wait-observed (lambda (x) (eq x :read-one))))
      (sleep 1)
      (is (<= sent 2) "~D messages of 2 MiB were sent to a handler that reads none" sent)
      (clgrpc.grpc:call-cancel call)
      (sb-thread:join-thread sender :default nil :timeout 5))))

(test bad-response-metadata-fails-the-call-and-frees-it
  ;; Each failed call gives back its handler slot: far more of them than
  ;; the connection has slots, and the connection still serves.
  (with-grpc (ch :max-concurrent-streams 50)
    (dotimes (i 120)
      (let ((status (status-of (lambda () (unary ch "BadMetadata" (bytes 1) :timeout 5)))))
        (unless (equal "INTERNAL" (first status))
          (fail "call ~D: ~S" i status)
          (return))))
    (is (equalp (bytes 9) (unary ch "Echo" (bytes 9) :timeout 5)))))

(test compression-asked-for-after-the-headers
  ;; The response headers went out without grpc-encoding: later messages go
  ;; uncompressed, and the call succeeds.
  (with-grpc (ch)
    (let ((call (clgrpc.grpc:bidi-streaming-call ch (call-path "ZipLater") :timeout 5)))
      (dotimes (i 3)
        (clgrpc.grpc:call-send call (bytes i))
        (is (equalp (bytes i) (clgrpc.grpc:call-recv call))))
      (clgrpc.grpc:call-close-send call)
      (is (null (clgrpc.grpc:call-recv call))))))

(test a-connection-gets-its-share-of-streaming-handlers
  ;; With the stream pool half taken, one channel holds idle streams beyond
  ;; its share; another channel's streaming call still runs, and the first
  ;; channel's queued calls run as its own finish.
  (with-grpc (ch :max-streaming-handlers-per-connection 4 :max-handler-threads 8)
    (let* ((idle (loop repeat 10
                       collect (clgrpc.grpc:bidi-streaming-call ch (call-path "Chat") :timeout 20)))
           (other (clgrpc.grpc:make-channel "127.0.0.1" (clgrpc.grpc::channel-port ch))))
      (unwind-protect
           (progn
             (is (equal '((3)) (within 5 (lambda ()
                                           (let ((call (clgrpc.grpc:bidi-streaming-call other (call-path "Chat") :timeout 5)))
                                             (clgrpc.grpc:call-send call (bytes 3))
                                             (prog1 (coerce (clgrpc.grpc:call-recv call) 'list)
                                               (clgrpc.grpc:call-close-send call)))))))
             ;; The tenth stream was queued; it runs once those before it end.
             (dolist (call (butlast idle)) (clgrpc.grpc:call-close-send call))
             (let ((last (car (last idle))))
               (is (equal '((5)) (within 5 (lambda ()
                                             (clgrpc.grpc:call-send last (bytes 5))
                                             (coerce (clgrpc.grpc:call-recv last) 'list))))))
             (dolist (call idle) (clgrpc.grpc:call-cancel call)))
        (clgrpc.grpc:channel-close other)))))

(defun raw-read-until-quiet (peer seconds)
  "Read frames until none comes for SECONDS; returns the END_STREAM count."
  (loop for f = (raw-read-frame peer seconds)
        until (symbolp f)
        count (and (member (clgrpc.http2:frame-type f)
                           (list clgrpc.http2:+frame-headers+ clgrpc.http2:+frame-data+))
                   (clgrpc.http2:frame-end-stream-p f))
        do (when (= (clgrpc.http2:frame-type f) clgrpc.http2:+frame-headers+)
             (raw-decode-headers peer f))))

(test large-window-peer-that-reads-late
  ;; The peer grants every window up front, asks for 300 responses of
  ;; 32 KiB (9.4 MiB, over the output's high-water mark), and reads nothing
  ;; for a second.  It never sends WINDOW_UPDATE: the parked responses must
  ;; resume as the output drains.
  (with-raw-grpc (peer)
    (raw-open-windows peer)
    (loop for id from 1 by 2 repeat 300
          do (raw-grpc-request peer id "/test.Svc/Reply32K" (bytes 7)))
    (sleep 1)
    ;; 300 responses, each ending with its trailers (END_STREAM)
    (is (= 300 (raw-read-until-quiet peer 5)))))

(test streams-beyond-the-share-run-while-the-pool-has-room
  ;; A connection's share binds only when the pool is crowded: a channel
  ;; with more long-lived streams than its share still gets each served.
  (with-grpc (ch :max-streaming-handlers-per-connection 4)
    (let ((calls (loop repeat 10
                       collect (clgrpc.grpc:bidi-streaming-call ch (call-path "Chat") :timeout 10))))
      (is (equal (loop for i below 10 collect (list i))
                 (loop for call in calls
                       for i from 0
                       collect (progn (clgrpc.grpc:call-send call (bytes i))
                                      (coerce (clgrpc.grpc:call-recv call) 'list)))))
      (dolist (call calls) (clgrpc.grpc:call-cancel call)))))

(test queued-calls-that-end-give-their-slots-back
  ;; Queued calls cancelled by the client free their handler slots at once:
  ;; the connection takes new streams although its running ones go on.
  (with-grpc (ch :max-streaming-handlers-per-connection 2 :max-handler-threads 4 :max-concurrent-streams 10)
    (let* ((running (loop repeat 2 collect (clgrpc.grpc:bidi-streaming-call ch (call-path "Chat") :timeout 20)))
           (queued (loop repeat 8 collect (clgrpc.grpc:bidi-streaming-call ch (call-path "Chat") :timeout 20))))
      (sleep 0.2)
      (dolist (call queued) (clgrpc.grpc:call-cancel call))
      (sleep 0.2)
      (is (equalp (bytes 7) (unary ch "Echo" (bytes 7) :timeout 5)))
      (dolist (call running) (clgrpc.grpc:call-cancel call)))))

(test large-responses-take-turns
  ;; A 16 MiB response to a peer that reads nothing for a while, then a
  ;; small one: the small one goes out between parts of the large one, not
  ;; after all of it.
  (with-raw-grpc (peer)
    (raw-open-windows peer)
    (raw-grpc-request peer 1 "/test.Svc/Reply16M" (bytes 1))
    (sleep 0.3)
    (raw-grpc-request peer 3 "/test.Svc/Echo" (bytes 3))
    (sleep 0.5)
    (let ((large-before 0) (small-done nil))
      (loop for f = (raw-read-frame peer 5)
            until (or (symbolp f) small-done)
            do (when (= (clgrpc.http2:frame-type f) clgrpc.http2:+frame-headers+)
                 (raw-decode-headers peer f))
               (cond ((and (= 3 (clgrpc.http2:frame-stream-id f)) (clgrpc.http2:frame-end-stream-p f))
                      (setf small-done t))
                     ((and (= 1 (clgrpc.http2:frame-stream-id f))
                           (= (clgrpc.http2:frame-type f) clgrpc.http2:+frame-data+))
                      (incf large-before (- (clgrpc.http2:frame-data-end f) (clgrpc.http2:frame-data-start f))))))
      (is-true small-done)
      (is (< large-before (* 15 1024 1024))
          "~,1F MiB of the large response went before the small one" (/ large-before 1048576.0)))))

(defun request-burst (peer first-id count path)
  "COUNT requests HEADERS+END_STREAM for PATH on streams from FIRST-ID, as
octets to send in order."
  (let ((b (make-obuf 65536)))
    (loop for id from first-id by 2 repeat count
          do (clgrpc.http2:write-headers-frame
              b id (raw-header-block peer (grpc-request-headers path)) :end-stream t))
    (obuf-contents b)))

(defun write-until-stalled (fd next-burst stall-seconds limit-seconds)
  "Write the octets NEXT-BURST returns, in order, until no octet has gone
for STALL-SECONDS (true) or LIMIT-SECONDS have passed (NIL)."
  (let ((burst (funcall next-burst))
        (pos 0)
        (start (get-internal-real-time))
        (progress (get-internal-real-time)))
    (flet ((seconds-since (time) (/ (- (get-internal-real-time) time) internal-time-units-per-second)))
      (loop
        (when (> (seconds-since start) limit-seconds) (return nil))
        (when (> (seconds-since progress) stall-seconds) (return t))
        (let ((n (clgrpc.net:fd-write-some fd burst pos (length burst))))
          (cond ((null n) (return t))   ; the server closed the connection
                ((plusp n) (incf pos n) (setf progress (get-internal-real-time)))
                (t (sleep 0.01)))
          (when (= pos (length burst))
            (setf burst (funcall next-burst) pos 0)))))))

(test peer-that-never-reads-stops-being-read
  ;; Requests that each cost one small frame and produce a response: the
  ;; peer never reads, so the server stops reading it once its output is
  ;; past the pause mark instead of buffering without bound, and the peer's
  ;; own writes stall.
  (let* ((server (clgrpc.grpc:make-server))
         (port (clgrpc.grpc:server-start server))
         (peer (raw-connect port))
         (next-id 1))
    (unwind-protect
         (progn
           (raw-preface peer (list (cons clgrpc.http2:+settings-initial-window-size+ #x7fffffff)))
           (is-true (write-until-stalled (raw-peer-fd peer)
                                         (lambda ()
                                           (prog1 (request-burst peer next-id 2000 "/no.Such/Method")
                                             (incf next-id 4000)))
                                         2 60)
                    "the peer's writes never stalled (~D requests)" (floor next-id 2))
           (let ((conn (first (sb-thread:with-mutex ((clgrpc.grpc::server-lock server))
                                (loop for c being the hash-keys of (clgrpc.grpc::server-connections server)
                                      collect c)))))
             (if conn
                 (clgrpc.http2:with-connection-lock (conn)
                   (is-true (or (clgrpc.http2::conn-read-paused conn) (clgrpc.http2::conn-closed conn)))
                   (is (< (clgrpc.http2::%buffered conn) (* 16 1024 1024))
                       "~D octets buffered" (clgrpc.http2::%buffered conn)))
                 (pass))))
      (raw-close peer)
      (clgrpc.grpc:server-stop server :grace 1))))

(test graceful-stop-delivers-the-last-response
  ;; The server stops while a 16 MiB response is still going out to a peer
  ;; that reads it slowly: all of it arrives, then its trailers.
  (let* ((server (clgrpc.grpc:make-server))
         (port (progn (register-test-methods server) (clgrpc.grpc:server-start server)))
         (peer (raw-connect-port port))
         (stopper nil))
    (unwind-protect
         (progn
           (raw-open-windows peer)
           (raw-grpc-request peer 1 "/test.Svc/Reply16M" (bytes 1))
           (sleep 0.3)
           (setf stopper (sb-thread:make-thread (lambda () (clgrpc.grpc:server-stop server :grace 20))))
           (let ((octets 0) (ended nil))
             (loop for f = (raw-read-frame peer 5)
                   until (or (symbolp f) ended)
                   do (when (= (clgrpc.http2:frame-type f) clgrpc.http2:+frame-headers+)
                        (raw-decode-headers peer f)
                        (when (and (= 1 (clgrpc.http2:frame-stream-id f)) (clgrpc.http2:frame-end-stream-p f))
                          (setf ended t)))
                      (when (and (= (clgrpc.http2:frame-type f) clgrpc.http2:+frame-data+)
                                 (= 1 (clgrpc.http2:frame-stream-id f)))
                        (incf octets (- (clgrpc.http2:frame-data-end f) (clgrpc.http2:frame-data-start f))))
                      (sleep 0.0005))       ; a slow reader
             (is (= (+ 5 (* 16 1024 1024)) octets))
             (is-true ended)))
      (when stopper (sb-thread:join-thread stopper :default nil :timeout 30))
      (raw-close peer)
      (clgrpc.grpc:server-stop server :grace 1))))

(test server-stop-keeps-one-deadline
  ;; Three connections each with a call that runs past the grace period,
  ;; and three peers that read none of the responses they asked for: the
  ;; whole stop takes the grace period, not a second or two per connection.
  (let* ((server (clgrpc.grpc:make-server))
         (port (progn (register-test-methods server) (clgrpc.grpc:server-start server)))
         (channels (loop repeat 3 collect (clgrpc.grpc:make-channel "127.0.0.1" port)))
         (threads (loop for ch in channels
                        collect (let ((ch ch))
                                  (sb-thread:make-thread
                                   (lambda () (status-of (lambda () (unary ch "Sleep" (bytes 1) :timeout 10))))))))
         (peers (loop repeat 3 collect (raw-connect-port port))))
    (unwind-protect
         (progn
           (dolist (peer peers)
             (raw-open-windows peer)
             (loop for id from 1 by 2 repeat 300
                   do (raw-grpc-request peer id "/test.Svc/Reply32K" (bytes 7))))
           (sleep 0.5)
           (let ((start (get-internal-real-time)))
             (clgrpc.grpc:server-stop server :grace 1)
             (let ((took (/ (- (get-internal-real-time) start) internal-time-units-per-second)))
               (is (< took 2.5) "server-stop :grace 1 took ~,2F s" took))))
      (dolist (peer peers) (raw-close peer))
      (dolist (th threads) (sb-thread:join-thread th :default nil :timeout 5))
      (dolist (ch channels) (clgrpc.grpc:channel-close ch)))))

;;; ------------------------------------------------------------------
;;; The client: refused streams and connecting

(defun start-refusing-server (mode)
  "A gRPC echo server on raw HTTP/2 connections that refuses the first
stream it sees, unprocessed: with RST_STREAM REFUSED_STREAM (MODE
:REFUSED-STREAM) or with GOAWAY naming no stream processed (MODE :GOAWAY).
Every later request is answered with its own message.  Returns the
listener, the port and a function that counts the streams seen."
  (let* ((listener (clgrpc.net:tcp-listen "127.0.0.1" 0))
         (seen 0)
         (lock (sb-thread:make-mutex)))
    (labels ((answer (conn stream)
               (let ((body (clgrpc.http2:h2-stream-user stream)))
                 (clgrpc.http2:stream-write-headers conn stream '((":status" . "200") ("content-type" . "application/grpc")))
                 (clgrpc.http2:stream-write-data conn stream (obuf-data body) 0 (obuf-length body))
                 (clgrpc.http2:stream-write-headers conn stream '(("grpc-status" . "0")) :end-stream t)
                 (clgrpc.http2:request-flush conn)))
             (on-headers (conn stream headers end-stream)
               (declare (ignore headers))
               (let ((first (sb-thread:with-mutex (lock) (= 1 (incf seen)))))
                 (cond ((and first (eq mode :refused-stream))
                        (clgrpc.http2:stream-reset conn stream clgrpc.http2:+refused-stream+)
                        (clgrpc.http2:request-flush conn))
                       (first
                        (clgrpc.http2:write-goaway-frame (clgrpc.http2::conn-out conn) 0 clgrpc.http2:+no-error+)
                        (setf (clgrpc.http2::conn-goaway-sent conn) t)
                        (clgrpc.http2:request-flush conn))
                       (t
                        (setf (clgrpc.http2:h2-stream-user stream) (make-obuf 64))
                        (when end-stream (answer conn stream))))))
             (on-data (conn stream octets start end end-stream)
               (let ((body (clgrpc.http2:h2-stream-user stream)))
                 (when body
                   (obuf-write-bytes body octets start end)
                   (when end-stream (answer conn stream))))))
      (sb-thread:make-thread
       (lambda ()
         (loop
           (let ((socket (clgrpc.net:tcp-accept listener)))
             (unless socket (return))
             (clgrpc.http2:connection-start
              (clgrpc.http2:make-connection socket :server :on-headers #'on-headers :on-data #'on-data
                                                           :on-reset (lambda (&rest r) (declare (ignore r))))))))
       :name "refusing accept")
      (values listener (clgrpc.net:socket-local-port listener)
              (lambda () (sb-thread:with-mutex (lock) seen))))))

(test refused-streams-are-retried-transparently
  ;; gRPC's transparent retry: a stream the server refused without
  ;; processing it is sent again on a new stream, once, and the call
  ;; succeeds as if nothing happened.
  (dolist (mode '(:refused-stream :goaway))
    (multiple-value-bind (listener port seen) (start-refusing-server mode)
      (let ((ch (clgrpc.grpc:make-channel "127.0.0.1" port)))
        (unwind-protect
             (progn
               (is (equalp (bytes 1 2 3) (unary ch "Echo" (bytes 1 2 3) :timeout 5)) "~A" mode)
               (is (= 2 (funcall seen)) "~A: ~D streams" mode (funcall seen))
               (is (equalp (bytes 4) (unary ch "Echo" (bytes 4) :timeout 5)) "~A, afterwards" mode))
          (clgrpc.grpc:channel-close ch)
          (clgrpc.net:fd-shutdown (clgrpc.net:socket-fd listener) :both)
          (clgrpc.net:socket-close listener))))))

(test connecting-honours-the-deadline
  ;; A listener that never accepts, its backlog full: a connect hangs.  The
  ;; call fails at its deadline, and the channel's lock is not held
  ;; meanwhile (another call on it fails at its own deadline too).
  (let* ((listener (clgrpc.net:tcp-listen "127.0.0.1" 0 :backlog 1))
         (port (clgrpc.net:socket-local-port listener))
         (fillers (loop repeat 8
                        collect (handler-case (clgrpc.net:tcp-connect "127.0.0.1" port 0.2)
                                  (error () nil))))
         (ch (clgrpc.grpc:make-channel "127.0.0.1" port)))
    (unwind-protect
         (let* ((other (sb-thread:make-thread
                        (lambda () (status-of (lambda () (unary ch "Echo" (bytes 1) :timeout 0.5))))))
                (start (get-internal-real-time))
                (status (status-of (lambda () (unary ch "Echo" (bytes 1) :timeout 0.5))))
                (took (/ (- (get-internal-real-time) start) internal-time-units-per-second)))
           (is (equal "DEADLINE_EXCEEDED" (first status)) "~S" status)
           (is (< took 3) "the call took ~,2F s" took)
           (is (equal "DEADLINE_EXCEEDED" (first (sb-thread:join-thread other :default '("hung") :timeout 5)))))
      (clgrpc.grpc:channel-close ch)
      (dolist (s fillers) (when s (clgrpc.net:socket-close s)))
      (clgrpc.net:socket-close listener))))

(defun call-with-hanging-connects (function)
  "Call FUNCTION with the port of a listener whose backlog is full, so that
a connect to it hangs: the kernel drops the SYNs it cannot queue."
  (let* ((listener (clgrpc.net:tcp-listen "127.0.0.1" 0 :backlog 1))
         (port (clgrpc.net:socket-local-port listener))
         (fillers (loop repeat 8
                        collect (handler-case (clgrpc.net:tcp-connect "127.0.0.1" port 0.2)
                                  (error () nil)))))
    (unwind-protect (funcall function port)
      (dolist (s fillers) (when s (clgrpc.net:socket-close s)))
      (clgrpc.net:socket-close listener))))

(defun seconds-since (start)
  (/ (- (get-internal-real-time) start) internal-time-units-per-second))

(test a-connect-cut-short-by-one-deadline-leaves-the-others-theirs
  ;; The first call's connect attempt is bounded by its 0.3 s deadline.  A
  ;; call with a later deadline, waiting for that attempt, is not failed
  ;; with it (the server did not fail, a deadline passed): it tries again
  ;; and ends at its own deadline, DEADLINE_EXCEEDED.
  (call-with-hanging-connects
   (lambda (port)
     (let ((ch (clgrpc.grpc:make-channel "127.0.0.1" port)))
       (unwind-protect
            (let* ((first (sb-thread:make-thread
                           (lambda () (status-of (lambda () (unary ch "Echo" (bytes 1) :timeout 0.3))))))
                   (start (progn (sleep 0.05) (get-internal-real-time)))
                   (status (status-of (lambda () (unary ch "Echo" (bytes 1) :timeout 1.0))))
                   (took (seconds-since start)))
              (is (equal "DEADLINE_EXCEEDED" (first (sb-thread:join-thread first :default '("hung") :timeout 5))))
              (is (equal "DEADLINE_EXCEEDED" (first status)) "~S" status)
              (is (< 0.8 took 3) "the later call ended after ~,2F s" took))
         (clgrpc.grpc:channel-close ch))))))

(test connecting-without-a-deadline-gives-up
  ;; A call with no deadline does not wait for the kernel's two minutes of
  ;; SYN retries: one attempt is bounded as grpc-go bounds it, and failing
  ;; it is UNAVAILABLE, not DEADLINE_EXCEEDED.
  (call-with-hanging-connects
   (lambda (port)
     (let ((ch (clgrpc.grpc:make-channel "127.0.0.1" port))
           (start (get-internal-real-time)))
       (unwind-protect
            (let ((status (let ((clgrpc.grpc:*connect-timeout* 0.5))
                            (status-of (lambda () (unary ch "Echo" (bytes 1)))))))
              (is (equal "UNAVAILABLE" (first status)) "~S" status)
              (is (< (seconds-since start) 3) "the call took ~,2F s" (seconds-since start)))
         (clgrpc.grpc:channel-close ch))))))

(test closing-a-channel-ends-its-connect
  ;; Closing a channel while a call connects (and another waits for that
  ;; connection) fails both at once with UNAVAILABLE, instead of leaving
  ;; them until the connect gives up.
  (call-with-hanging-connects
   (lambda (port)
     (let* ((ch (clgrpc.grpc:make-channel "127.0.0.1" port))
            (calls (loop repeat 2
                         collect (sb-thread:make-thread
                                  (lambda () (status-of (lambda () (unary ch "Echo" (bytes 1)))))))))
       (sleep 0.3)
       (let ((start (get-internal-real-time)))
         (clgrpc.grpc:channel-close ch)
         (dolist (thread calls)
           (let ((status (sb-thread:join-thread thread :default '("hung") :timeout 5)))
             (is (equal "UNAVAILABLE" (first status)) "~S" status)))
         (is (< (seconds-since start) 2) "the calls ended ~,2F s after the close" (seconds-since start)))))))

;;; A reactor must never lose a wakeup: a thread that posts work for a
;;; connection (a handler's response, a client's request) signals the
;;; reactor's eventfd unless a signal is already pending.  If the reactor
;;; cleared its "pending" flag before draining the eventfd, a post in
;;; between had its signal drained with the flag left set; no thread
;;; signalled again, and every post after that waited for the reactor's
;;; 200 ms sweep timeout: a ping-pong stream fell from thousands of round
;;; trips a second to five.

(defun fd-readable-p (fd)
  "True if FD has input now (poll(2) with no wait)."
  (sb-alien:with-alien ((pfd (array (sb-alien:unsigned 16) 4)))
    (setf (sb-alien:deref pfd 0) (ldb (byte 16 0) fd)
          (sb-alien:deref pfd 1) (ldb (byte 16 16) fd)
          (sb-alien:deref pfd 2) 1         ; POLLIN
          (sb-alien:deref pfd 3) 0)
    (and (plusp (sb-alien:alien-funcall
                 (sb-alien:extern-alien "poll" (function sb-alien:int sb-sys:system-area-pointer
                                                         sb-alien:unsigned-long sb-alien:int))
                 (sb-alien:alien-sap pfd) 1 0))
         (logtest 1 (sb-alien:deref pfd 3)))))

(defun reactor-deaf-p (reactor)
  "True if REACTOR's wake flag says a signal is pending while its eventfd
holds none, for half a second on end: then no thread will signal it again.
(For a moment, between draining and clearing, that is the normal state.)"
  (loop repeat 50
        always (and (clgrpc.http2::reactor-wake-pending reactor)
                    (not (fd-readable-p (clgrpc.http2::reactor-wakefd reactor))))
        do (sleep 0.01)))

(test reactors-never-lose-a-wakeup
  ;; The race itself needs the reactor preempted between the two steps, which
  ;; a pinned benchmark server hit within seconds and a test cannot force;
  ;; so this checks the order that closes it, on a live reactor, using the
  ;; reactor's lock as a gate.  Holding the lock, signal as a poster does.
  ;; The reactor wakes: it must drain the signal at once, and only then wait
  ;; for the lock to clear its flag (in the old order it waited for the lock
  ;; first, and drained after clearing, which is the window).  Released, the
  ;; flag clears, and posts wake the reactor as before.  The reactor also
  ;; takes its lock at the top of each turn (to collect posts), so an
  ;; attempt that catches it there sees no drain; the old order fails every
  ;; attempt, the new one at most by such bad luck, so five are made.
  (with-grpc (ch)
    (is (equalp (bytes 1) (unary ch "Echo" (bytes 1))))
    (let* ((reactor (clgrpc.http2::conn-reactor (clgrpc.grpc::channel-connection ch)))
           (wakefd (clgrpc.http2::reactor-wakefd reactor)))
      (is (loop repeat 5
                thereis (prog1
                            (sb-thread:with-mutex ((clgrpc.http2::reactor-lock reactor))
                              (setf (clgrpc.http2::reactor-wake-pending reactor) t)
                              (clgrpc.net:eventfd-signal wakefd)
                              (loop repeat 50 thereis (progn (sleep 0.01) (not (fd-readable-p wakefd)))))
                          ;; Let the reactor clear the flag before the next attempt.
                          (loop repeat 200 until (not (clgrpc.http2::reactor-wake-pending reactor))
                                do (sleep 0.01))))
          "the reactor did not drain its eventfd before taking its lock to clear the flag")
      (is (loop repeat 200 thereis (progn (sleep 0.01) (not (clgrpc.http2::reactor-wake-pending reactor))))
          "the reactor never cleared its wake flag")
      (is (not (reactor-deaf-p reactor)))
      (is (equalp (bytes 4 5 6) (unary ch "Echo" (bytes 4 5 6)))))))
