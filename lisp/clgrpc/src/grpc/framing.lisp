;;;; Length-Prefixed-Message (PROTOCOL-HTTP2.md):
;;;;
;;;;   Compressed-Flag (1 octet) | Message-Length (4 octets, big-endian) | Message
;;;;
;;;; Outbound, a message is encoded once into a per-thread scratch buffer
;;;; behind a 5-octet prefix that is patched afterwards, then copied into DATA
;;;; frames.  Inbound, the assembler walks DATA payloads in place: a message
;;;; wholly inside one frame (the usual case) is decoded straight from the
;;;; read buffer; only messages split across frames are copied.
;;;;
;;;; Flow control: every octet of a message is returned to the peer when the
;;;; application takes the message (backpressure), whether it was decoded in
;;;; place or assembled from several frames.  The one exception is a message
;;;; larger than the stream's receive window: holding its octets back would
;;;; stall it for ever, so they are returned as they arrive (the message is
;;;; still bounded by the maximum receive size), as grpc-go grants window
;;;; for a message larger than its window.

(in-package #:clgrpc.grpc)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defvar *scratch* nil
  "This thread's encoding buffer.  Worker threads bind one; elsewhere each
send allocates.")

(declaim (ftype function %fail-call %server-got-request))

(defun encode-message-frame (call message &optional (compress (call-compress call)))
  "MESSAGE serialized behind its gRPC prefix, in an OBUF (the scratch
buffer: valid until this thread encodes again).  Compressed with gzip if
COMPRESS and the call declared gzip in its headers."
  (let ((buf (or *scratch* (make-obuf 256))))
    (declare (type obuf buf))
    (obuf-reset buf)
    (obuf-write-u8 buf 0)
    (obuf-write-u32 buf 0)
    (funcall (call-encoder call) message buf)
    (let ((n (- (obuf-fill buf) 5)))
      (when (> n (call-max-send-size call))
        (raise-grpc-error +resource-exhausted+ "message of ~D octets exceeds the limit of ~D"
                          n (call-max-send-size call)))
      (if (and compress (call-send-gzip call))
          (let ((compressed (gzip-octets (obuf-data buf) 5 (obuf-fill buf))))
            (setf (obuf-fill buf) 5)
            (obuf-write-bytes buf compressed)
            (setf (aref (obuf-data buf) 0) 1)
            (obuf-set-u32 buf 1 (length compressed)))
          (obuf-set-u32 buf 1 n)))
    buf))

(defun %deliver (call octets start end window)
  "A complete message OCTETS[START,END) (lock held).  WINDOW is the number
of flow-control octets to return when the application takes it."
  (declare (type call call) (type octets octets) (type index start end) (type fixnum window))
  (let* ((compressed (= (call-asm-flag call) 1))
         (message (handler-case
                      (if compressed
                          (let ((plain (gunzip-octets octets start end
                                                      (call-max-receive-size call))))
                            (funcall (call-decoder call) plain 0 (length plain)))
                          (funcall (call-decoder call) octets start end))
                    (grpc-error (e)
                      (%fail-call call (grpc-error-code e) (grpc-error-message e))
                      (return-from %deliver nil))
                    (error (e)
                      (%fail-call call +internal+
                                  (format nil "failed to decode message: ~A" e))
                      (return-from %deliver nil)))))
    (incf (call-received call))
    (if (and (eq (call-role call) :server)
             (member (call-kind call) '(:unary :server-streaming)))
        (progn (setf (call-last-compressed call) compressed)
               (%server-got-request call message window))
        (let ((inbox (or (call-inbox call)
                         (setf (call-inbox call) (make-fifo 8)))))
          (fifo-push inbox message)
          (fifo-push inbox window)
          (fifo-push inbox compressed)
          (if (and (plusp (call-waiters call))
                   (clgrpc.http2:reader-thread-p (call-conn call)))
              ;; Woken under the lock, the receiver would only block on it
              ;; again until the reactor lets go: wake it once the reactor
              ;; has, and once for all the messages of this read.
              (unless (call-wake-deferred call)
                (setf (call-wake-deferred call) t)
                (clgrpc.http2:%defer-to-reader (call-conn call) #'%wake-receiver call))
              (broadcast-if-waiting (call-waiters call) (call-cv call)))))))

(defun %wake-receiver (call)
  "Reactor, lock released: wake CALL-RECV for the messages delivered.
Without the lock the waiter count may be stale, which is harmless: a thread
that stopped waiting has the message, one that waits again is woken for
nothing, and one that has not counted itself yet sees the message before
it waits."
  (setf (call-wake-deferred call) nil)
  (broadcast-if-waiting (call-waiters call) (call-cv call)))

(defun %check-prefix (call)
  "Validate a complete prefix; returns true to go on."
  (let ((flag (call-asm-flag call))
        (length (call-asm-length call)))
    (cond ((and (= flag 1) (not (call-recv-gzip call)))
           ;; A server rejects unsupported grpc-encodings before any message
           ;; (UNIMPLEMENTED), so a compressed message here came without one.
           (%fail-call call +internal+ "compressed message without a supported grpc-encoding")
           nil)
          ((= flag 1) t)
          ((/= flag 0)
           (%fail-call call +internal+ (format nil "invalid compressed flag ~D" flag))
           nil)
          ((> length (call-max-receive-size call))
           (%fail-call call +resource-exhausted+
                       (format nil "message of ~D octets exceeds the limit of ~D"
                               length (call-max-receive-size call)))
           nil)
          (t t))))

(defun %hold-or-return (call n)
  "Account N flow-control octets of the message being assembled: held until
the application takes it, or returned now (the result) if it is too large
to hold."
  (declare (type call call) (type fixnum n))
  (if (call-asm-hold call)
      (progn (incf (call-asm-held call) n) 0)
      n))

(defun %begin-message (call conn)
  "A complete prefix: decide whether the message's octets can be held."
  (setf (call-asm-hold call)
        (<= (+ 5 (call-asm-length call))
            (the fixnum (clgrpc.http2::conn-local-initial-window conn)))))

(defun %take-held (call)
  (shiftf (call-asm-held call) 0))

(defun %feed (call conn stream octets start end)
  "Run the DATA payload OCTETS[START,END) through CALL's message assembler
(lock held)."
  (declare (type call call) (type octets octets) (type index start end))
  (let ((immediate 0))                  ; flow-control octets to return now
    (declare (type fixnum immediate))
    (loop while (and (< start end) (null (call-status call)))
          do (if (< (call-asm-prefix call) 5)
                 (if (and (zerop (call-asm-prefix call)) (>= (- end start) 5))
                     ;; Fast path: a whole prefix, and maybe the whole message.
                     (let ((length (read-u32 octets (1+ start))))
                       (setf (call-asm-flag call) (aref octets start)
                             (call-asm-length call) length
                             (call-asm-prefix call) 5)
                       (unless (%check-prefix call) (return))
                       (let ((body (+ start 5)))
                         (if (<= (+ body length) end)
                             (progn
                               (setf (call-asm-prefix call) 0)
                               (%deliver call octets body (+ body length) (+ 5 length))
                               (setf start (+ body length)))
                             (progn (%begin-message call conn)
                                    (incf immediate (%hold-or-return call 5))
                                    (setf start body)))))
                     ;; A prefix split across frames, one octet at a time:
                     ;; held until the length says whether it may be.
                     (let ((b (aref octets start))
                           (k (call-asm-prefix call)))
                       (if (zerop k)
                           (setf (call-asm-flag call) b (call-asm-length call) 0
                                 (call-asm-hold call) t)
                           (setf (call-asm-length call)
                                 (logior (ash (logand (call-asm-length call) #xffffff) 8) b)))
                       (setf (call-asm-prefix call) (1+ k))
                       (incf start)
                       (incf (call-asm-held call))
                       (when (and (= k 4) (not (%check-prefix call)))
                         (return))
                       (when (= k 4)
                         (%begin-message call conn)
                         (unless (call-asm-hold call)
                           (incf immediate (%take-held call))))
                       (when (and (= k 4) (zerop (call-asm-length call)))
                         (setf (call-asm-prefix call) 0)
                         (%deliver call octets start start (%take-held call)))))
                 ;; Payload of a message that did not fit in one frame.
                 (let* ((buf (or (call-asm-buf call) (setf (call-asm-buf call) (make-obuf 1024))))
                        (need (- (call-asm-length call) (obuf-fill buf)))
                        (n (min need (- end start))))
                   (obuf-write-bytes buf octets start (+ start n))
                   (incf start n)
                   (incf immediate (%hold-or-return call n))
                   (when (= n need)
                     (setf (call-asm-prefix call) 0)
                     (%deliver call (obuf-data buf) 0 (obuf-fill buf) (%take-held call))
                     (if (> (length (obuf-data buf)) 65536)
                         ;; Do not keep a large message's buffer for the
                         ;; rest of a long stream.
                         (setf (call-asm-buf call) nil)
                         (obuf-reset buf))))))
    (when (plusp immediate)
      (clgrpc.http2:%stream-consumed conn stream immediate))))
