;;;; Connection lifecycle: the preface and SETTINGS exchange (3.4, 6.5),
;;;; handing the connection to a reactor, GOAWAY and graceful shutdown (6.8),
;;;; PING round trips (6.7) and closing.
;;;;
;;;; Closing is careful about the file descriptor: only the reactor closes
;;;; it (reactor.lisp, FINISH-CONNECTION), after the connection is marked
;;;; closed (no new flush can start) and any flush in progress has returned,
;;;; so no thread can write to a descriptor number the kernel has already
;;;; reused.

(in-package #:clgrpc.http2)

(defun local-settings (conn)
  "Our SETTINGS (only what differs from the protocol defaults)."
  (let ((settings '()))
    (when (eq (conn-role conn) :client)
      (push (cons +settings-enable-push+ 0) settings))
    (when (conn-local-max-concurrent conn)
      (push (cons +settings-max-concurrent-streams+ (conn-local-max-concurrent conn)) settings))
    (unless (= (conn-local-initial-window conn) +default-window-size+)
      (push (cons +settings-initial-window-size+ (conn-local-initial-window conn)) settings))
    (unless (= (conn-local-max-frame-size conn) +default-max-frame-size+)
      (push (cons +settings-max-frame-size+ (conn-local-max-frame-size conn)) settings))
    (push (cons +settings-max-header-list-size+ (conn-local-max-header-list-size conn)) settings)
    (nreverse settings)))

(defun connection-start (conn)
  "Send our preface (the client's magic octets, then SETTINGS and a
connection WINDOW_UPDATE) and hand CONN to a reactor, which reads it from
now on.  Peers may send before seeing each other's SETTINGS (3.4), so
nothing waits here."
  (let ((now (clgrpc.util:now-us)))
    (with-connection-lock (conn)
      (setf (conn-created-us conn) now
            (conn-last-read-us conn) now
            (conn-idle-since-us conn) now)
      (let ((out (conn-out conn)))
        (when (eq (conn-role conn) :client)
          (obuf-write-bytes out +connection-preface+))
        (write-settings-frame out (local-settings conn))
        ;; The connection window starts at 65535 whatever SETTINGS say
        ;; (6.9.2); only WINDOW_UPDATE raises it.
        (let ((increment (- (conn-local-connection-window conn) +default-window-size+)))
          (when (plusp increment)
            (write-window-update-frame out 0 increment)
            (incf (conn-recv-window conn) increment))))
      (let ((reactor (pick-reactor)))
        (setf (conn-reactor conn) reactor
              (conn-lane conn) (reactor-index reactor)))))
  (let ((tls (conn-tls conn)))
    (when tls
      (ensure-handshake-executor))
    (when (and tls (eq (conn-role conn) :client))
      ;; The ClientHello, which the flush below sends; the reactor does the
      ;; rest of the handshake, and the preface goes out once it is done.
      (clgrpc.tls:session-handshake tls)))
  (flush-connection conn)
  (with-connection-lock (conn)
    (%post conn +post-register+))
  conn)

(defun %mark-closed (conn code)
  "Mark CONN closed and fail its streams (lock held).  Returns true the
first time."
  (unless (conn-closed conn)
    (setf (conn-closed conn) t)
    (unless (conn-close-code conn)
      (setf (conn-close-code conn) code))
    (discharge-header-block conn)
    (let ((streams (loop for s being the hash-values of (conn-streams conn) collect s)))
      (dolist (stream streams)
        (%close-stream conn stream :ended)
        (when (h2-stream-user stream)
          (funcall (the function (conn-on-reset conn)) conn stream
                   (or code +no-error+) :connection))))
    (sb-thread:condition-broadcast (conn-window-cv conn))
    (sb-thread:condition-broadcast (conn-send-cv conn))
    (sb-thread:condition-broadcast (conn-drain-cv conn))
    t))

(defun connection-close (conn &key (code +no-error+))
  "Close CONN now (any thread): streams fail, and its reactor releases the
socket.  Buffered output not yet written is dropped."
  (let ((unstarted nil))
    (with-connection-lock (conn)
      (%mark-closed conn code)
      (if (conn-reactor conn)
          (%post conn +post-close+)
          (setf unstarted (not (shiftf (conn-finished conn) t)))))
    (when unstarted
      ;; No reactor will release the socket.
      (clgrpc.net:socket-close (conn-socket conn))
      (setf (conn-fd conn) -1)
      (when (conn-on-close conn)
        (funcall (the function (conn-on-close conn)) conn))))
  nil)

(defun connection-wait-closed (conn &optional timeout)
  "Wait until the socket is released.  True if it is."
  (let ((deadline (and timeout (+ (clgrpc.util:now-us) (round (* timeout 1000000))))))
    (with-connection-lock (conn)
      (loop until (conn-finished conn)
            do (unless (clgrpc.util:counted-wait ((conn-window-waiters conn))
                         (clgrpc.util:wait-on (conn-window-cv conn) (conn-lock conn) deadline))
                 (return)))
      (conn-finished conn))))

(defun connection-send-goaway (conn)
  "Graceful GOAWAY (NO_ERROR, last stream the peer opened), written now
without waiting.  The peer opens no more streams; those it has run to
completion, and the connection closes once the last one has ended and its
output is written."
  (with-connection-lock (conn)
    (unless (or (conn-closed conn) (conn-goaway-sent conn))
      (write-goaway-frame (conn-out conn) (conn-max-remote-id conn) +no-error+)
      (setf (conn-goaway-sent conn) t)
      (when (zerop (hash-table-count (conn-streams conn)))
        (%post conn +post-drain-close+))))
  (flush-connection conn))

(defun connection-shutdown (conn &key (timeout 5))
  "Graceful shutdown (6.8): GOAWAY with NO_ERROR and the last stream the
peer opened, so it opens no more; wait up to TIMEOUT seconds for open
streams to finish; then close."
  (let ((deadline (+ (clgrpc.util:now-us) (round (* timeout 1000000)))))
    (connection-send-goaway conn)
    (with-connection-lock (conn)
      (loop while (and (not (conn-closed conn))
                       (plusp (hash-table-count (conn-streams conn))))
            do (unless (clgrpc.util:counted-wait ((conn-window-waiters conn))
                         (clgrpc.util:wait-on (conn-window-cv conn) (conn-lock conn) deadline))
                 (return))))
    (flush-connection conn :wait t :timeout (max 0.1 (/ (- deadline (clgrpc.util:now-us)) 1d6)))
    (connection-close conn)
    (connection-wait-closed conn (max 1 timeout))))

(defun connection-ping (conn &key (timeout 5))
  "Send a PING and wait for its ACK.  Returns the round trip in seconds, or
NIL on timeout or close."
  (let ((start (clgrpc.util:now-us))
        (deadline (+ (clgrpc.util:now-us) (round (* timeout 1000000))))
        (target 0))
    (with-connection-lock (conn)
      (setf target (1+ (conn-ping-acks conn)))
      (write-ping-frame (conn-out conn) start))
    (flush-connection conn)
    (with-connection-lock (conn)
      (loop while (and (< (conn-ping-acks conn) target) (not (conn-closed conn)))
            do (unless (clgrpc.util:counted-wait ((conn-window-waiters conn))
                         (clgrpc.util:wait-on (conn-window-cv conn) (conn-lock conn) deadline))
                 (return)))
      (and (>= (conn-ping-acks conn) target)
           (/ (- (clgrpc.util:now-us) start) 1d6)))))
