;;;; The reactor's loop: waiting on epoll, the work other threads posted,
;;;; the backlog of connections with input left over, and the timers.
;;;;
;;;; Timers.  Every +SWEEP-INTERVAL-US+ the reactor looks at each of its
;;;; connections for the deadlines of CONNECTION-LIMITS: the handshake,
;;;; keepalive pings and their ACKs, idle and age limits, and the linger
;;;; after a GOAWAY.  At 10,000 connections that is a few hundred
;;;; microseconds per sweep.

(in-package #:clgrpc.http2)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +sweep-interval-us+ 200000)
(defconstant +client-tls-handshake-timeout-us+ 20000000
  "How long a client waits for a server to complete the TLS handshake:
grpc-go's minimum connect timeout, which covers its handshake too.")

;;; ------------------------------------------------------------------
;;; Timers

(defun %send-keepalive-ping (conn now)
  (with-connection-lock (conn)
    (setf (conn-keepalive-ping-us conn) now)
    (write-ping-frame (conn-out conn) now))
  (%write-out conn nil))

(defun %graceful-goaway (conn)
  "Reactor: GOAWAY NO_ERROR (idle or age limit); the connection closes
with its last stream."
  (with-connection-lock (conn)
    (unless (conn-goaway-sent conn)
      (write-goaway-frame (conn-out conn) (conn-max-remote-id conn) +no-error+)
      (setf (conn-goaway-sent conn) t)))
  (if (zerop (hash-table-count (conn-streams conn)))
      (drain-and-close conn)
      (%write-out conn nil)))

(defconstant +tls-trim-idle-us+ 1000000
  "A TLS connection through which nothing went either way for this long
gives back what its session's buffers grew to, once (clgrpc.tls:session-trim).")

(defun sweep-connection (conn now)
  (declare (type fixnum now))
  (let ((limits (conn-limits conn))
        (linger (conn-linger-until conn)))
    (let* ((tls (conn-tls conn))
           (since (and tls (clgrpc.tls:session-idle-since tls))))
      (when (and since (> (- now (the fixnum since)) +tls-trim-idle-us+)
                 (not (or (conn-flushing conn) (conn-write-blocked conn)
                          (conn-handshake-running conn)))
                 (clgrpc.tls:tls-session-established tls))
        (clgrpc.tls:session-trim tls)))
    (cond
      (linger
       (when (>= now (the fixnum linger))
         (finish-connection conn (conn-close-code conn))))
      ((and (eq (conn-role conn) :server) (not (conn-peer-settings-seen conn))
            (limits-handshake-timeout limits)
            (> (- now (conn-created-us conn)) (the fixnum (limits-handshake-timeout limits))))
       ;; No preface and SETTINGS in time: close without a word, as
       ;; grpc-go does (the peer may not even speak HTTP/2).
       (finish-connection conn +settings-timeout+))
      ((and (eq (conn-role conn) :client) (conn-tls conn)
            (not (clgrpc.tls:tls-session-established (conn-tls conn)))
            (> (- now (conn-created-us conn)) +client-tls-handshake-timeout-us+))
       ;; A server that accepts and never finishes the handshake: our
       ;; calls would wait for ever (those without a deadline).
       (setf (conn-close-reason conn) "the server did not complete the TLS handshake in time")
       (finish-connection conn +connect-error+))
      ((and (eq (conn-role conn) :client) (not (conn-peer-settings-seen conn))
            (limits-handshake-timeout limits)
            (> (- now (conn-created-us conn)) (the fixnum (limits-handshake-timeout limits))))
       ;; A server that accepts and never speaks HTTP/2: its subchannel
       ;; would stay CONNECTING, and calls without a deadline would wait
       ;; for ever.  grpc-go gives up on the server's preface as well.
       (setf (conn-close-reason conn) "the server sent no HTTP/2 SETTINGS in time")
       (finish-connection conn +settings-timeout+))
      (t
       (let ((ping (conn-keepalive-ping-us conn))
             (max-idle (limits-max-idle limits))
             (max-age (limits-max-age limits))
             (grace (limits-max-age-grace limits))
             (age-goaway (conn-age-goaway-us conn))
             (keepalive (limits-keepalive-time limits)))
         (cond
           ((and ping (> (conn-last-read-us conn) (the fixnum ping)))
            ;; Any frame read since the ping shows the peer is there, as
            ;; grpc-go takes it: an ACK queued behind data is not late.
            (setf (conn-keepalive-ping-us conn) nil))
           ((and ping (> (- now (the fixnum ping)) (limits-keepalive-timeout limits)))
            (setf (conn-close-reason conn) "keepalive ping not acknowledged in time")
            (finish-connection conn +cancel+))
           ((and age-goaway grace (> (- now (the fixnum age-goaway)) (the fixnum grace)))
            (finish-connection conn +no-error+))
           ((and max-age (null age-goaway) (eq (conn-role conn) :server)
                 (> (- now (conn-created-us conn)) (the fixnum max-age)))
            (setf (conn-age-goaway-us conn) now)
            (%graceful-goaway conn))
           ((and max-idle (eq (conn-role conn) :server) (not (conn-goaway-sent conn))
                 (zerop (hash-table-count (conn-streams conn)))
                 (> (- now (conn-idle-since-us conn)) (the fixnum max-idle)))
            (%graceful-goaway conn))
           ((and keepalive (null ping) (conn-peer-settings-seen conn)
                 (> (- now (conn-last-read-us conn)) (the fixnum keepalive))
                 ;; A client pings only while it has calls, unless allowed
                 ;; to without (grpc-go's PermitWithoutStream).
                 (or (eq (conn-role conn) :server)
                     (plusp (hash-table-count (conn-streams conn)))
                     (limits-permit-without-stream limits)))
            (%send-keepalive-ping conn now))
           ((and (null ping) (eq (conn-role conn) :server) (conn-peer-settings-seen conn)
                 (limits-receive-stall-timeout limits)
                 (plusp (hash-table-count (conn-streams conn)))
                 ;; A peer busy reading what we send is there: a PING would
                 ;; only queue behind that output.
                 (not (conn-write-blocked conn))
                 (zerop (obuf-fill (conn-out conn)))
                 (> (- now (conn-last-read-us conn))
                    (the fixnum (limits-receive-stall-timeout limits))))
            ;; A peer that holds streams open and sends nothing: is it
            ;; there?  One that does not answer is closed as above.
            (%send-keepalive-ping conn now))))))))

(defun sweep (reactor)
  (let ((now (clgrpc.util:now-us))
        (conns '()))
    (maphash (lambda (fd conn) (declare (ignore fd)) (push conn conns)) (reactor-table reactor))
    (dolist (conn conns)
      (serving (conn)
        (with-connection-guard (conn)
          (sweep-connection conn now))))
    (setf (reactor-next-sweep-us reactor) (+ now +sweep-interval-us+))))

;;; ------------------------------------------------------------------
;;; The loop

(defun register-connection (reactor conn)
  (with-connection-lock (conn)
    (unless (or (conn-closed conn) (conn-registered conn) (< (conn-fd conn) 0))
      (setf (gethash (conn-fd conn) (reactor-table reactor)) conn
            (conn-registered conn) t)
      (unless (clgrpc.net:epoll-control (reactor-epfd reactor) :add (conn-fd conn)
                                        (%interest conn))
        (remhash (conn-fd conn) (reactor-table reactor))
        (setf (conn-registered conn) nil)))))

(declaim (ftype function %handshake-done))

(defun run-posted (reactor)
  (dolist (conn (nreverse (sb-thread:with-mutex ((reactor-lock reactor))
                            (shiftf (reactor-posted reactor) '()))))
    (let ((bits (with-connection-lock (conn)
                  (shiftf (conn-posted conn) 0))))
      (declare (type fixnum bits))
      (serving (conn)
        (with-connection-guard (conn)
          (when (logtest bits +post-register+)
            (register-connection reactor conn))
          (when (logtest bits +post-handshake+)
            (%handshake-done reactor conn))
          (cond ((logtest bits +post-close+)
                 (finish-connection conn (conn-close-code conn)))
                ((logtest bits +post-drain-close+)
                 (drain-and-close conn))
                ((logtest bits +post-flush+)
                 (%write-out conn nil)
                 (%after-write conn))))))))

(defun run-backlog (reactor)
  "A turn for each connection whose input waits from an earlier turn."
  (dolist (conn (nreverse (shiftf (reactor-backlog reactor) '())))
    (serving (conn)
      (with-connection-guard (conn)
        (%backlog-turn reactor conn)))))

(defun reactor-loop (reactor)
  (let ((events (reactor-events reactor))
        (epfd (reactor-epfd reactor))
        (wakefd (reactor-wakefd reactor))
        (table (reactor-table reactor)))
    (loop
      (run-posted reactor)
      ;; Everything handed off since the last wait goes now, in one batch
      ;; an executor: after the epoll round that produced it, before this
      ;; thread may block.
      (when (reactor-handoffs reactor)
        (submit-handoffs reactor))
      (let* ((wait-ms (max 0 (min +sweep-interval-us+
                                  (floor (- (reactor-next-sweep-us reactor) (clgrpc.util:now-us))
                                         1000))))
             (held-us (release-held reactor))
             ;; Under the lock that posts take: a post that found the turn
             ;; still on is seen here, and keeps this wait from blocking.
             (posted (sb-thread:with-mutex ((reactor-lock reactor))
                       (setf (reactor-in-turn reactor) nil)
                       (reactor-posted reactor)))
             (timeout (cond ((or posted (reactor-backlog reactor)) 0)
                            (held-us (min wait-ms (ceiling (the fixnum held-us) 1000)))
                            (t wait-ms)))
             (n (clgrpc.net:epoll-wait epfd events timeout)))
        (declare (type fixnum n))
        (setf (reactor-in-turn reactor) t)
        (dotimes (i n)
          (let ((fd (clgrpc.net:epoll-event-fd events i))
                (flags (clgrpc.net:epoll-event-flags events i)))
            (if (= fd wakefd)
                ;; Drain first, then clear the flag.  The other order loses
                ;; wakeups for good: a post between the two would see no
                ;; signal pending, signal, and have its signal drained with
                ;; the flag left set, so that no thread signalled again and
                ;; every later post waited for the sweep's timeout.  In this
                ;; order a post in between finds the flag still set and
                ;; relies on RUN-POSTED, which the loop runs next.
                (progn
                  (clgrpc.net:eventfd-drain wakefd)
                  (sb-thread:with-mutex ((reactor-lock reactor))
                    (setf (reactor-wake-pending reactor) nil)))
                (let ((conn (gethash fd table)))
                  ;; Held replies are due within the round, not after it.
                  (release-held reactor)
                  (when conn
                    (serving (conn)
                      (with-connection-guard (conn)
                        (when (logtest flags clgrpc.net:+epollout+)
                          (on-writable conn))
                        (when (and (logtest flags (logior clgrpc.net:+epollin+ clgrpc.net:+epollhup+
                                                          clgrpc.net:+epollerr+))
                                   (conn-registered conn))
                          (on-readable reactor conn))))
                    ;; Output that handler threads left to this turn waits for
                    ;; one connection's turn at most, not the whole round.
                    (when (reactor-posted reactor)
                      (run-posted reactor)))))))
        (run-backlog reactor)
        (release-held reactor)
        (when (>= (clgrpc.util:now-us) (reactor-next-sweep-us reactor))
          (sweep reactor))))))

(defun reactor-main (reactor)
  "The thread of REACTOR's loop."
  (flet ((run ()
           ;; The loop never ends; a bug outside any connection's guard is
           ;; logged and the loop goes on.
           (loop
             (handler-case (reactor-loop reactor)
               (serious-condition (e)
                 (clgrpc.util:log-line "reactor error: ~A" e))))))
    ;; Whoever started this thread made it the reactor's under the lock.
    (sb-thread:with-mutex ((reactor-lock reactor)))
    (let ((wrapper *reactor-thread-wrapper*))
      (if wrapper
          (funcall (the function wrapper) #'run)
          (run)))))
