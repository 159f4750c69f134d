;;;; What a server tolerates from its peers (CONNECTION-LIMITS and the gRPC
;;;; server's handler slots): each limit is tripped by a raw peer over a
;;;; real loopback socket, and the server must answer as grpc-go does --
;;;; close, PING, or GOAWAY with the right code -- within a bounded time.

(in-package #:clgrpc.tests)

(def-suite :clgrpc.limits :in :clgrpc)
(in-suite :clgrpc.limits)

(defun limits (&rest args)
  (apply #'clgrpc.http2:make-connection-limits args))

(test handshake-timeout-closes-a-silent-connection
  (with-echo-server (server :limits (limits :handshake-timeout 300000))
    (with-raw-peer (peer server :preface nil)
      ;; Half the preface, then nothing.
      (raw-send peer (subseq clgrpc.http2:+connection-preface+ 0 10))
      (is (eq :eof (raw-expect-eof peer))))))

(test handshake-timeout-spares-a-connection-that-spoke
  (with-echo-server (server :limits (limits :handshake-timeout 300000))
    (with-raw-peer (peer server)
      (sleep 0.6)
      (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-ping-frame b 9)))
      (is (not (symbolp (raw-expect peer (frame-of-type clgrpc.http2:+frame-ping+))))))))

(test keepalive-pings-a-silent-peer-then-closes
  (with-echo-server (server :limits (limits :keepalive-time 300000 :keepalive-timeout 300000))
    (with-raw-peer (peer server)
      (let ((ping (raw-expect peer (frame-of-type clgrpc.http2:+frame-ping+) 3)))
        (is (not (symbolp ping)))
        (is (not (clgrpc.http2:frame-ack-p ping))))
      ;; Never acknowledged: the connection goes.
      (is (eq :eof (raw-expect-eof peer))))))

(test keepalive-ack-keeps-the-connection
  (with-echo-server (server :limits (limits :keepalive-time 300000 :keepalive-timeout 300000))
    (with-raw-peer (peer server)
      (dotimes (i 3)
        (let ((ping (raw-expect peer (frame-of-type clgrpc.http2:+frame-ping+) 3)))
          (is (not (symbolp ping)))
          (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-ping-frame
                                           b (clgrpc.http2:frame-opaque-data ping) :ack t))))))))

(test too-many-pings-get-enhance-your-calm
  ;; grpc-go's enforcement: without streams, any PING within 2 h of the
  ;; previous one is a strike; the third strike ends the connection.
  (with-echo-server (server)
    (with-raw-peer (peer server)
      (dotimes (i 4)
        (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-ping-frame b i))))
      (let ((f (raw-expect peer (frame-of-type clgrpc.http2:+frame-goaway+))))
        (is (not (symbolp f)))
        (is (equal "ENHANCE_YOUR_CALM" (clgrpc.http2:error-code-name (clgrpc.http2:frame-error-code f))))
        (is (string= "too_many_pings" (octets-to-latin1 (clgrpc.http2:frame-data f)
                                                        (clgrpc.http2:frame-data-start f)
                                                        (clgrpc.http2:frame-data-end f))))))))

(test pings-are-fine-when-permitted
  (with-echo-server (server :limits (limits :permit-without-stream t :min-ping-interval 0))
    (with-raw-peer (peer server)
      (dotimes (i 10)
        (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-ping-frame b i))))
      (dotimes (i 10)
        (is (not (symbolp (raw-expect peer (frame-of-type clgrpc.http2:+frame-ping+)))))))))

(test max-idle-sends-goaway-no-error
  (with-echo-server (server :limits (limits :max-idle 300000))
    (with-raw-peer (peer server)
      (is (equal "NO_ERROR" (raw-expect-goaway peer)))
      (is (eq :eof (raw-expect-eof peer))))))

(test rapid-resets-get-enhance-your-calm
  (with-echo-server (server :limits (limits :max-early-resets-per-second 10))
    (with-raw-peer (peer server)
      (loop for id from 1 by 2 repeat 20
            do (raw-headers peer id)
               (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-rst-stream-frame
                                                b id clgrpc.http2:+cancel+))))
      (is (equal "ENHANCE_YOUR_CALM" (raw-expect-goaway peer))))))

;;; ------------------------------------------------------------------
;;; The gRPC server: handler slots, reset-before-start, parked responses

(defmacro with-grpc-server ((port server &rest make-server-args) &body body)
  `(let* ((,server (clgrpc.grpc:make-server ,@make-server-args))
          (,port nil))
     (unwind-protect (progn ,@body)
       (clgrpc.grpc:server-stop ,server :grace 1))))

(test reset-before-start-never-runs
  (let ((ran '()) (lock (sb-thread:make-mutex)) (gate (sb-thread:make-semaphore)))
    ;; On an executor of one thread: a call that waits for it can be reset
    ;; before it starts.
    (with-grpc-server (port server :max-handler-threads 1)
      (clgrpc.grpc:register-method server "/t.T/Block"
                                   (lambda (req call) (declare (ignore call))
                                     (sb-thread:wait-on-semaphore gate :timeout 5) req))
      (clgrpc.grpc:register-method server "/t.T/Count"
                                   (lambda (req call) (declare (ignore call))
                                     (sb-thread:with-mutex (lock) (push req ran)) req))
      (setf port (clgrpc.grpc:server-start server))
      (let ((peer (raw-connect-port port)))
        (unwind-protect
             (progn
               ;; The only unary worker blocks; the next request queues
               ;; behind it and is reset while it waits.
               (raw-grpc-request peer 1 "/t.T/Block" (octets-of 1))
               (sleep 0.2)
               (raw-grpc-request peer 3 "/t.T/Count" (octets-of 3))
               (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-rst-stream-frame
                                                b 3 clgrpc.http2:+cancel+)))
               (sleep 0.2)
               (sb-thread:signal-semaphore gate)
               (is (not (symbolp (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+ 1)))))
               (raw-grpc-request peer 5 "/t.T/Count" (octets-of 5))
               (is (not (symbolp (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+ 5)))))
               (is (equalp (list (octets-of 5)) (sb-thread:with-mutex (lock) ran))))
          (raw-close peer))))))

(test reset-streams-keep-their-handler-slots
  (let ((gate (sb-thread:make-semaphore)))
    (with-grpc-server (port server :max-concurrent-streams 2 :max-early-resets-per-second 100)
      (clgrpc.grpc:register-method server "/t.T/Block"
                                   (lambda (req call) (declare (ignore call))
                                     (sb-thread:wait-on-semaphore gate :timeout 5) req))
      (setf port (clgrpc.grpc:server-start server))
      (let ((peer (raw-connect-port port)))
        (unwind-protect
             (progn
               ;; Two running handlers, both reset by the peer: the streams
               ;; are gone, the handlers are not, so a third is refused.
               (dolist (id '(1 3))
                 (raw-grpc-request peer id "/t.T/Block" (octets-of id))
                 (sleep 0.1)
                 (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-rst-stream-frame
                                                  b id clgrpc.http2:+cancel+))))
               (sleep 0.2)
               (raw-grpc-request peer 5 "/t.T/Block" (octets-of 5))
               (is (equal "REFUSED_STREAM" (raw-expect-rst peer 5)))
               ;; Once they finish, slots are free again.
               (sb-thread:signal-semaphore gate 2)
               (sleep 0.3)
               (sb-thread:signal-semaphore gate 1)
               (raw-grpc-request peer 7 "/t.T/Block" (octets-of 7))
               (is (not (symbolp (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+ 7))))))
          (raw-close peer))))))

(test response-parks-until-the-window-opens
  ;; A peer with no stream window gets the response HEADERS at once and its
  ;; DATA only after a WINDOW_UPDATE; no thread waits meanwhile.
  (with-grpc-server (port server)
    (clgrpc.grpc:register-method server "/t.T/Echo" (lambda (req call) (declare (ignore call)) req))
    (setf port (clgrpc.grpc:server-start server))
    (let ((peer (raw-connect port)))
      (unwind-protect
           (progn
             (raw-preface peer (list (cons clgrpc.http2:+settings-initial-window-size+ 0)))
             (raw-grpc-request peer 1 "/t.T/Echo" (octets-range 100))
             (is (not (symbolp (raw-expect peer (frame-of-type clgrpc.http2:+frame-headers+ 1)))))
             (is (eq :timeout (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+ 1) 0.5)))
             (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-window-update-frame b 1 1000)))
             (let ((d (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+ 1))))
               (is (not (symbolp d)))
               (is (= 105 (- (clgrpc.http2:frame-data-end d) (clgrpc.http2:frame-data-start d)))))
             (let ((trailers (raw-expect peer (frame-of-type clgrpc.http2:+frame-headers+ 1))))
               (is (not (symbolp trailers)))
               (is (clgrpc.http2:frame-end-stream-p trailers))))
        (raw-close peer)))))

(test max-connections-closes-the-rest-at-once
  (with-grpc-server (port server :max-connections 2)
    (setf port (clgrpc.grpc:server-start server))
    (let ((peers (loop repeat 4 collect (raw-connect-port port))))
      (unwind-protect
           (progn
             (sleep 0.3)
             (is (= 2 (clgrpc.grpc:server-connection-count server)))
             (is (= 2 (clgrpc.grpc:server-refused-connection-count server)))
             (is (eq :eof (raw-expect-eof (third peers))))
             (is (not (symbolp (raw-expect (first peers) (frame-of-type clgrpc.http2:+frame-settings+))))))
        (mapc #'raw-close peers)))))

(test peer-header-list-limit-is-obeyed
  ;; The server advertises SETTINGS_MAX_HEADER_LIST_SIZE 1024: a request
  ;; whose metadata exceeds it fails on the client, before it is sent.
  (with-grpc-server (port server :max-header-list-size 1024)
    (clgrpc.grpc:register-method server "/t.T/Echo" (lambda (req call) (declare (ignore call)) req))
    (setf port (clgrpc.grpc:server-start server))
    (let ((ch (clgrpc.grpc:make-channel "127.0.0.1" port)))
      (unwind-protect
           (progn
             ;; The first call learns the server's SETTINGS.
             (is (equalp (octets-of 1) (clgrpc.grpc:unary-call ch "/t.T/Echo" (octets-of 1) :timeout 5)))
             (let ((code nil))
               (handler-case (clgrpc.grpc:unary-call ch "/t.T/Echo" (octets-of 2) :timeout 5
                                                     :metadata (list (cons "x-big" (make-string 2000 :initial-element #\a))))
                 (clgrpc.grpc:grpc-error (e) (setf code (clgrpc.grpc:grpc-error-code e))))
               (is (eql clgrpc.grpc:+internal+ code)))
             (is (equalp (octets-of 3) (clgrpc.grpc:unary-call ch "/t.T/Echo" (octets-of 3) :timeout 5))))
        (clgrpc.grpc:channel-close ch)))))
