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
  ;; One channel holds idle streams beyond its share; another channel's
  ;; streaming call still runs, and the first channel's queued calls run
  ;; as its own finish.
  (with-grpc (ch :max-streaming-handlers-per-connection 4)
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
    (raw-send-obuf peer (lambda (b)
                          (clgrpc.http2:write-settings-frame
                           b (list (cons clgrpc.http2:+settings-initial-window-size+ #x7fffffff)))
                          (clgrpc.http2:write-window-update-frame b 0 (- #x7fffffff 65535))))
    (loop for id from 1 by 2 repeat 300
          do (raw-grpc-request peer id "/test.Svc/Reply32K" (bytes 7)))
    (sleep 1)
    ;; 300 responses, each ending with its trailers (END_STREAM)
    (is (= 300 (raw-read-until-quiet peer 5)))))

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
             (raw-send-obuf peer (lambda (b)
                                   (clgrpc.http2:write-settings-frame
                                    b (list (cons clgrpc.http2:+settings-initial-window-size+ #x7fffffff)))
                                   (clgrpc.http2:write-window-update-frame b 0 (- #x7fffffff 65535))))
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
