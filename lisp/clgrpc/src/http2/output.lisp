;;;; Sending: frames appended to the connection's output buffer under its
;;;; lock, flow-controlled DATA (6.9), and flushing.
;;;;
;;;; Flushing coalesces.  Frames accumulate in OUT; a flush swaps OUT with
;;;; SPARE under the lock and writes SPARE with no lock held, so other
;;;; threads keep appending meanwhile, and loops until OUT is empty.  Only one
;;;; thread flushes at a time (FLUSHING); a thread that finds a flush in
;;;; progress just leaves its frames for it.  Under load many responses go out
;;;; in one send(2).
;;;;
;;;; Two ways to get output written:
;;;;  - FLUSH-CONNECTION: the calling thread writes (blocking).  For a
;;;;    complete unary response or request this is the lowest latency.
;;;;  - %REQUEST-FLUSH: wake the connection's writer thread.  The reader thread
;;;;    uses it for control frames (it must never block on a slow peer, or two
;;;;    peers both blocked writing would deadlock), and streaming sends use it
;;;;    so a handler producing many messages keeps encoding while the previous
;;;;    batch is written.

(in-package #:clgrpc.http2)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +high-water+ (* 4 1024 1024)
  "Output buffered beyond this makes DATA senders wait for the writer:
flow-control windows alone would let a fast producer buffer without bound
when the socket is slow.")

;;; ------------------------------------------------------------------
;;; Flushing

(defun writer-loop (conn)
  (let ((lock (conn-lock conn)))
    (loop
      (sb-thread:with-mutex (lock)
        (loop until (or (conn-writer-wanted conn) (conn-closed conn))
              do (sb-thread:condition-wait (conn-writer-cv conn) lock))
        (when (conn-closed conn)
          (return))
        (setf (conn-writer-wanted conn) nil))
      (flush-connection conn))))

(defun %request-flush (conn)
  "Have OUT flushed soon (lock held).  Cheap when a flush is already pending
or in progress.  On the reader thread this only notes that the reader's
frames (SETTINGS and PING acknowledgements, WINDOW_UPDATE, RST_STREAM) need
writing: READ-LOOP writes them with %READER-FLUSH before it reads again."
  (if (eq sb-thread:*current-thread* (conn-reader-thread conn))
      (setf (conn-reader-flush conn) t)
      (%wake-writer conn))
  nil)

(defun %wake-writer (conn)
  "Have the writer thread flush OUT soon (lock held)."
  (when (and (not (conn-flushing conn))
             (not (conn-writer-wanted conn))
             (not (conn-closed conn))
             (plusp (obuf-fill (conn-out conn))))
    (setf (conn-writer-wanted conn) t)
    (if (conn-writer-thread conn)
        (sb-thread:condition-notify (conn-writer-cv conn))
        ;; Started on first use: unary traffic may never need it.
        (setf (conn-writer-thread conn)
              (sb-thread:make-thread #'writer-loop :name "h2 writer" :arguments (list conn)))))
  nil)

;;; The profile (PERFORMANCE.md) showed the writer thread's wake-ups, mostly
;;; for acknowledging grpc-go's BDP PINGs and for WINDOW_UPDATEs, at ~8% of
;;; the server's CPU in futex calls alone, plus the writer's own wait and
;;; send.  The reader writes those frames itself, but only what the socket
;;; takes at once: it must never block on a slow peer.
(defun %reader-flush (conn)
  "Reader thread: write OUT with non-blocking send(2)s.  Whatever the
socket does not take now, and whatever other threads append meanwhile, is
left to the writer thread, in order."
  (let ((lock (conn-lock conn))
        (buf nil))
    (sb-thread:with-mutex (lock)
      (setf (conn-reader-flush conn) nil)
      (when (or (conn-flushing conn) (conn-closed conn)
                (zerop (obuf-fill (conn-out conn))))
        ;; A flush in progress writes our frames too.
        (return-from %reader-flush nil))
      (setf (conn-flushing conn) t)
      (rotatef (conn-out conn) (conn-spare conn))
      (setf buf (conn-spare conn)))
    (let* ((fill (obuf-fill buf))
           (n (or (clgrpc.net:fd-write-some (conn-fd conn) (obuf-data buf) 0 fill) 0)))
      (declare (type index fill n))
      (sb-thread:with-mutex (lock)
        (if (= n fill)
            (obuf-reset buf)
            ;; The unwritten rest goes back in front of what others appended
            ;; meanwhile (a failed connection: the writer finds out and closes).
            (let ((data (obuf-data buf))
                  (out (conn-out conn)))
              (replace data data :start2 n :end2 fill)
              (setf (obuf-fill buf) (- fill n))
              (obuf-write-bytes buf (obuf-data out) 0 (obuf-fill out))
              (obuf-reset out)
              (rotatef (conn-out conn) (conn-spare conn))))
        (setf (conn-flushing conn) nil)
        (clgrpc.util:broadcast-if-waiting (conn-drain-waiters conn) (conn-drain-cv conn))
        (%wake-writer conn))))
  nil)

(defun flush-connection (conn &key wait)
  "Write everything buffered, in this thread, unless another thread is
already flushing (it will write our frames too).  With WAIT, return only
once everything buffered so far has been written, whoever writes it (needed
before shutting the socket down).  Returns NIL if the connection failed."
  (let ((lock (conn-lock conn))
        (buf nil))
    (sb-thread:with-mutex (lock)
      (when wait
        (loop while (and (conn-flushing conn) (not (conn-closed conn)))
              do (clgrpc.util:counted-wait ((conn-drain-waiters conn))
                   (sb-thread:condition-wait (conn-drain-cv conn) lock))))
      (when (or (conn-flushing conn) (conn-closed conn)
                (zerop (obuf-fill (conn-out conn))))
        (return-from flush-connection t))
      (setf (conn-flushing conn) t)
      (rotatef (conn-out conn) (conn-spare conn))
      (setf buf (conn-spare conn)))
    (loop
      (let ((ok (clgrpc.net:fd-write (conn-fd conn) (obuf-data buf) 0 (obuf-fill buf))))
        (obuf-reset buf)
        (sb-thread:with-mutex (lock)
          (cond ((or (not ok) (conn-closed conn) (zerop (obuf-fill (conn-out conn))))
                 (setf (conn-flushing conn) nil)
                 (clgrpc.util:broadcast-if-waiting (conn-drain-waiters conn) (conn-drain-cv conn))
                 (unless ok
                   (setf buf nil))
                 (return))
                (t
                 (rotatef (conn-out conn) (conn-spare conn))
                 (setf buf (conn-spare conn))
                 ;; Senders waiting at the high-water mark can go on.
                 (clgrpc.util:broadcast-if-waiting (conn-drain-waiters conn) (conn-drain-cv conn)))))))
    (if buf
        t
        (progn (connection-close conn :code +internal-error+) nil))))

;;; ------------------------------------------------------------------
;;; Streams we open

(defun %open-stream (conn user)
  "A new client stream for USER, registered with the next odd identifier.
Waits while the peer's SETTINGS_MAX_CONCURRENT_STREAMS is reached.  The
caller must write its HEADERS before releasing the lock, so identifiers
reach the wire in increasing order (5.1.1).  Returns NIL if the connection
can take no more streams (closed, GOAWAY, identifiers exhausted)."
  (loop
    (when (or (conn-closed conn) (conn-goaway-received conn) (conn-goaway-sent conn)
              (> (conn-next-stream-id conn) +max-window-size+))
      (return nil))
    (let ((limit (conn-peer-max-concurrent conn)))
      (when (or (null limit) (< (conn-active-local conn) limit))
        (let* ((id (conn-next-stream-id conn))
               (stream (make-h2-stream id :open (conn-peer-initial-window conn)
                                       (conn-local-initial-window conn) user)))
          (setf (conn-next-stream-id conn) (+ id 2)
                (gethash id (conn-streams conn)) stream)
          (incf (conn-active-local conn))
          (return stream))))
    (clgrpc.util:counted-wait ((conn-window-waiters conn))
      (sb-thread:condition-wait (conn-window-cv conn) (conn-lock conn)))))

;;; ------------------------------------------------------------------
;;; Frames (lock held)

(defun %write-headers (conn stream headers &key end-stream)
  "A header block for STREAM: HEADERS (+ CONTINUATION if larger than the
peer's SETTINGS_MAX_FRAME_SIZE).  HEADERS is a list of (name . value) or
(name value indexing); see CLGRPC.HPACK:ENCODE-HEADER-BLOCK."
  (declare (type h2-stream stream))
  (let* ((out (conn-out conn))
         (pos (begin-frame out +frame-headers+
                           (logior +flag-end-headers+ (if end-stream +flag-end-stream+ 0))
                           (h2-stream-id stream))))
    (clgrpc.hpack:encode-header-block (conn-encoder conn) out headers)
    (finish-headers-frame out pos (conn-peer-max-frame-size conn))
    (when end-stream
      (%stream-end-local conn stream))
    t))

(defun %stream-send-window (conn stream)
  "Octets of DATA STREAM may send now."
  (max 0 (min (conn-send-window conn) (h2-stream-send-window stream))))

(defun %write-data (conn stream octets start end &key end-stream)
  "DATA frames for OCTETS[START,END) on STREAM, split by the peer's maximum
frame size and waiting (lock released) for flow-control window as needed.
Returns T, or NIL if the stream or connection closed first."
  (declare (type h2-stream stream) (type octets octets) (type index start end))
  (let ((lock (conn-lock conn)))
    (loop
      (when (or (conn-closed conn) (not (stream-can-send-p stream)))
        (return nil))
      (let* ((out (conn-out conn))
             (remaining (- end start))
             (n (min remaining (conn-peer-max-frame-size conn)
                     (conn-send-window conn) (h2-stream-send-window stream))))
        (declare (type fixnum n))
        (cond ((and (> (obuf-fill out) +high-water+) (conn-flushing conn)
                    (not (eq sb-thread:*current-thread* (conn-reader-thread conn))))
               (clgrpc.util:counted-wait ((conn-drain-waiters conn))
                 (sb-thread:condition-wait (conn-drain-cv conn) lock)))
              ((or (plusp n) (zerop remaining))
               ;; An empty DATA frame needs no window (6.9.1): gRPC clients
               ;; half-close with one.
               (let* ((n (max n 0))
                      (last (= n remaining)))
                 (write-data-frame out (h2-stream-id stream) octets
                                   :start start :end (+ start n)
                                   :end-stream (and last end-stream))
                 (decf (conn-send-window conn) n)
                 (decf (h2-stream-send-window stream) n)
                 (incf start n)
                 (when last
                   (when end-stream
                     (%stream-end-local conn stream))
                   (return t))))
              (t
               ;; Out of window: let the peer see what we buffered, so it can
               ;; answer with WINDOW_UPDATE, and wait.
               (%request-flush conn)
               (clgrpc.util:counted-wait ((conn-window-waiters conn))
                 (sb-thread:condition-wait (conn-window-cv conn) lock))))))))

(defun %reset-stream (conn stream error-code)
  "Send RST_STREAM for STREAM and close it (no callback: the caller knows)."
  (declare (type h2-stream stream))
  (unless (or (eq (h2-stream-state stream) :closed) (zerop (h2-stream-id stream)))
    (write-rst-stream-frame (conn-out conn) (h2-stream-id stream) error-code)
    (%close-stream conn stream :reset-sent)))

(defun %stream-consumed (conn stream n)
  "The application consumed N octets of STREAM's DATA: give them back to the
peer with WINDOW_UPDATE once a quarter of the window has accumulated (fewer,
larger updates).  Only for streams the peer can still send on."
  (declare (type h2-stream stream) (type fixnum n))
  (when (and (plusp n) (stream-can-receive-p stream))
    (let ((unacked (+ (h2-stream-recv-unacked stream) n)))
      (if (>= unacked (ash (conn-local-initial-window conn) -2))
          (progn
            (write-window-update-frame (conn-out conn) (h2-stream-id stream) unacked)
            (incf (h2-stream-recv-window stream) unacked)
            (setf (h2-stream-recv-unacked stream) 0)
            (%request-flush conn))
          (setf (h2-stream-recv-unacked stream) unacked)))))

;;; Lock-taking conveniences.

(defun reset-stream (conn stream error-code)
  (with-connection-lock (conn)
    (%reset-stream conn stream error-code)
    (%request-flush conn)))

(defun stream-consumed (conn stream n)
  (with-connection-lock (conn)
    (%stream-consumed conn stream n)))
