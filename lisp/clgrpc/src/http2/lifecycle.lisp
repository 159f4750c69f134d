;;;; Connection lifecycle: the preface and SETTINGS exchange (3.4, 6.5), the
;;;; reader thread, connection errors (5.4.1), GOAWAY and graceful shutdown
;;;; (6.8), PING round trips (6.7) and closing.
;;;;
;;;; Closing is careful about the file descriptor: the reader thread owns it
;;;; and closes it only after the connection is marked closed (no new flush
;;;; can start) and any flush in progress has returned, so no thread can write
;;;; to a descriptor number the kernel has already reused.

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
connection WINDOW_UPDATE) and start the reader thread.  Peers may send
before seeing each other's SETTINGS (3.4), so nothing waits here."
  (with-connection-lock (conn)
    (let ((out (conn-out conn)))
      (when (eq (conn-role conn) :client)
        (obuf-write-bytes out +connection-preface+))
      (write-settings-frame out (local-settings conn))
      ;; The connection window starts at 65535 whatever SETTINGS say
      ;; (6.9.2); only WINDOW_UPDATE raises it.
      (let ((increment (- (conn-local-connection-window conn) +default-window-size+)))
        (when (plusp increment)
          (write-window-update-frame out 0 increment)
          (incf (conn-recv-window conn) increment)))))
  (flush-connection conn)
  (setf (conn-reader-thread conn)
        (sb-thread:make-thread #'reader-main :name "h2 reader" :arguments (list conn)))
  conn)

(defun reader-main (conn)
  (let ((code nil) (message nil))
    (handler-case (let ((wrapper (conn-reader-wrapper conn)))
                    (if wrapper
                        (funcall wrapper (lambda () (read-loop conn)))
                        (read-loop conn)))
      (http2-error (e)
        (setf code (http2-error-code e) message (http2-error-message e)))
      (serious-condition (e)
        ;; A bug must cost this connection, not the process.
        (setf code +internal-error+
              message (ignore-errors (princ-to-string e)))))
    (when code
      (send-goaway-and-linger conn code message))
    (finish-connection conn code)))

(defun send-goaway-and-linger (conn code message)
  "Connection error: GOAWAY with the last stream we processed, then drain
input briefly so the peer reads the GOAWAY before our close can reset the
connection (closing with unread input sends a TCP RST)."
  (with-connection-lock (conn)
    (unless (conn-closed conn)
      (write-goaway-frame (conn-out conn) (conn-max-remote-id conn) code
                          (and message (latin1-to-octets
                                        (remove-if (lambda (c) (> (char-code c) 255))
                                                   (subseq message 0 (min 200 (length message)))))))
      (setf (conn-goaway-sent conn) t
            (conn-close-code conn) code)))
  (flush-connection conn :wait t)
  (clgrpc.net:fd-shutdown (conn-fd conn) :output)
  (let ((scratch (make-octets 4096))
        (deadline (+ (clgrpc.util:now-us) 200000)))
    (loop while (< (clgrpc.util:now-us) deadline)
          do (unless (clgrpc.net:fd-wait-readable (conn-fd conn) 0.05)
               (return))
             (let ((n (clgrpc.net:fd-read (conn-fd conn) scratch 0 4096)))
               (when (or (null n) (zerop n))
                 (return))))))

(defun %mark-closed (conn code)
  "Mark CONN closed and fail its streams (lock held).  Returns true the
first time."
  (unless (conn-closed conn)
    (setf (conn-closed conn) t)
    (unless (conn-close-code conn)
      (setf (conn-close-code conn) code))
    (let ((streams (loop for s being the hash-values of (conn-streams conn) collect s)))
      (dolist (stream streams)
        (%close-stream conn stream :ended)
        (when (h2-stream-user stream)
          (funcall (the function (conn-on-reset conn)) conn stream
                   (or code +no-error+) :connection))))
    (sb-thread:condition-broadcast (conn-window-cv conn))
    (sb-thread:condition-broadcast (conn-writer-cv conn))
    (sb-thread:condition-broadcast (conn-drain-cv conn))
    t))

(defun finish-connection (conn code)
  "The reader thread's exit: close everything and release the socket."
  (let ((writer nil))
    (unless code
      ;; A clean end (EOF, or GOAWAY and no streams left): what is buffered,
      ;; such as a last response, still goes out.
      (flush-connection conn :wait t))
    (with-connection-lock (conn)
      (%mark-closed conn code))
    ;; Wakes a flush blocked on a peer that stopped reading.
    (clgrpc.net:fd-shutdown (conn-fd conn) :both)
    (with-connection-lock (conn)
      ;; A flush that started before the close must return before the
      ;; descriptor is closed.
      (loop while (conn-flushing conn)
            do (clgrpc.util:counted-wait ((conn-drain-waiters conn))
                 (sb-thread:condition-wait (conn-drain-cv conn) (conn-lock conn))))
      (setf writer (conn-writer-thread conn)))
    (when (and writer (not (eq writer sb-thread:*current-thread*)))
      (sb-thread:join-thread writer :default nil :timeout 5))
    ;; Under the lock, so CONNECTION-CLOSE never shuts down a descriptor
    ;; number the kernel may already have given to another socket.
    (with-connection-lock (conn)
      (setf (conn-fd conn) -1)
      (clgrpc.net:socket-close (conn-socket conn)))
    (when (conn-on-close conn)
      (funcall (the function (conn-on-close conn)) conn))
    (with-connection-lock (conn)
      (setf (conn-reader-thread conn) nil)
      (sb-thread:condition-broadcast (conn-window-cv conn)))))

(defun connection-close (conn &key (code +no-error+))
  "Close CONN now (any thread): streams fail, the reader thread wakes up
and releases the socket.  Buffered output not yet written is dropped."
  (let ((never-started nil))
    (with-connection-lock (conn)
      (when (and (%mark-closed conn code) (null (conn-reader-thread conn)))
        (setf never-started t))
      (when (and (not never-started) (>= (conn-fd conn) 0))
        (clgrpc.net:fd-shutdown (conn-fd conn) :both)))
    (when never-started
      ;; Nobody else will release the socket.
      (clgrpc.net:socket-close (conn-socket conn))
      (setf (conn-fd conn) -1)
      (when (conn-on-close conn)
        (funcall (the function (conn-on-close conn)) conn))))
  nil)

(defun connection-wait-closed (conn &optional timeout)
  "Wait until the reader thread has finished.  True if it has."
  (let ((deadline (and timeout (+ (clgrpc.util:now-us) (round (* timeout 1000000))))))
    (with-connection-lock (conn)
      (loop while (conn-reader-thread conn)
            do (unless (clgrpc.util:counted-wait ((conn-window-waiters conn))
                         (clgrpc.util:wait-on (conn-window-cv conn) (conn-lock conn) deadline))
                 (return)))
      (null (conn-reader-thread conn)))))

(defun connection-send-goaway (conn)
  "Graceful GOAWAY (NO_ERROR, last stream the peer opened), written now.
The peer opens no more streams; those it has run to completion."
  (with-connection-lock (conn)
    (unless (or (conn-closed conn) (conn-goaway-sent conn))
      (write-goaway-frame (conn-out conn) (conn-max-remote-id conn) +no-error+)
      (setf (conn-goaway-sent conn) t)))
  (flush-connection conn :wait t))

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
    (flush-connection conn :wait t)
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
