;;;; Length-Prefixed-Message (PROTOCOL-HTTP2.md):
;;;;
;;;;   Compressed-Flag (1 octet) | Message-Length (4 octets, big-endian) | Message
;;;;
;;;; Outbound, a message is encoded once into a per-thread scratch buffer
;;;; behind a 5-octet prefix that is patched afterwards, then copied into DATA
;;;; frames.  Inbound, the assembler walks DATA payloads in place on the
;;;; reactor and queues each complete message as octets; decoding (and
;;;; inflating) happens on the thread that takes it, never on the reactor,
;;;; which serves every connection.
;;;;
;;;; Flow control follows what the application reads, as grpc-go's does.
;;;; Octets of a message go back to the peer (WINDOW_UPDATE) when the
;;;; application takes the message, or, for the message being assembled, as
;;;; they arrive while the application is waiting for it: a receiver blocked
;;;; in CALL-RECV with nothing else queued is reading that message.  So a
;;;; call buffers at most one window of messages the application has not
;;;; asked for, and a message of any size (up to the receive limit)
;;;; completes once it is asked for, however small the window or however
;;;; much of it earlier messages used.

(in-package #:clgrpc.grpc)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defvar *scratch* nil
  "This thread's encoding buffer.  Worker threads bind one; elsewhere each
send allocates.")

(defconstant +scratch-keep+ (* 256 1024)
  "A scratch buffer that grew past this for a large message is dropped once
the message is written, so that idle threads do not each keep one.")

(defun release-large-scratch ()
  "The message in this thread's scratch buffer has been copied out: drop the
buffer if a large message made it large."
  (let ((buf *scratch*))
    (when (and buf (> (length (obuf-data buf)) +scratch-keep+))
      (setf *scratch* (make-obuf 4096)))))

(declaim (ftype function %fail-call %server-got-request %charge))

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
    (incf (call-octets-sent call) (- (obuf-fill buf) 5))
    buf))

(defun decode-message (call octets end compressed)
  "The message in OCTETS[0,END), inflated first if COMPRESSED, decoded with
CALL's decoder.  Signals GRPC-ERROR: RESOURCE_EXHAUSTED or INTERNAL."
  (declare (type call call) (type octets octets) (type index end))
  (handler-case
      (if compressed
          (let ((plain (gunzip-octets octets 0 end (call-max-receive-size call))))
            (funcall (call-decoder call) plain 0 (length plain)))
          (funcall (call-decoder call) octets 0 end))
    (grpc-error (e) (error e))
    (error (e)
      (raise-grpc-error +internal+ "failed to decode message: ~A" e))))

(defconstant +queued-message-octets+ 96
  "What a queued message costs beside its octets, charged with them: its
four inbox entries, twice over for the slack of a ring that doubles, and
the header of its octet vector.  Without it a stream of empty messages
would queue 200,000 within a 1 MiB window for nothing.")

(defconstant +inbox-keep-entries+ 128
  "An inbox ring that grew past this for a burst is dropped once it is
empty, so that a call does not keep the peak of its queue.")

(defun %deliver (call octets length window)
  "A complete message, OCTETS[0,LENGTH), which the call now owns (lock
held).  WINDOW is the number of flow-control octets to return when the
application takes it."
  (declare (type call call) (type octets octets) (type index length) (type fixnum window))
  (let ((compressed (= (call-asm-flag call) 1)))
    (incf (call-received call))
    (incf (call-octets-received call) length)
    (if (and (eq (call-role call) :server)
             (member (call-kind call) '(:unary :server-streaming)))
        (%server-got-request call octets length compressed)
        (let ((inbox (or (call-inbox call)
                         ;; Four entries a message: room for eight messages
                         ;; on a stream, for one where a single message comes
                         ;; (a client's unary or client-streaming call).
                         (setf (call-inbox call)
                               (make-fifo (if (and (eq (call-role call) :client)
                                                   (member (call-kind call) '(:unary :client-streaming)))
                                              4
                                              32))))))
          (unless (%charge call +queued-message-octets+)
            ;; The call failed: the message it will never queue goes back.
            (clgrpc.http2:stream-discharge (call-conn call) (call-stream call) (length octets))
            (return-from %deliver))
          (fifo-push inbox octets)
          (fifo-push inbox length)
          (fifo-push inbox window)
          (fifo-push inbox compressed)
          (cond
            ((each-message-call-p call) (schedule-drain call))
            ((and (plusp (call-waiters call))
                  (clgrpc.http2:reader-thread-p (call-conn call)))
             ;; Woken under the lock, the receiver would only block on it
             ;; again until the reactor lets go: wake it once the reactor
             ;; has, and once for all the messages of this read.
             (unless (call-wake-deferred call)
               (setf (call-wake-deferred call) t)
               (clgrpc.http2:defer-to-reader (call-conn call) #'%wake-receiver call)))
            (t (broadcast-if-waiting (call-waiters call) (call-cv call))))))))

(defun %take-message (call)
  "Lock held: the oldest queued message as (values octets length
compressed), its flow-control octets given back to the peer; NIL if none."
  (let ((inbox (call-inbox call)))
    (when (and inbox (not (fifo-empty-p inbox)))
      (let ((octets (fifo-pop inbox))
            (length (fifo-pop inbox))
            (window (fifo-pop inbox))
            (compressed (fifo-pop inbox)))
        (when (call-stream call)
          (clgrpc.http2:stream-return-window (call-conn call) (call-stream call) window)
          (clgrpc.http2:stream-discharge (call-conn call) (call-stream call)
                                         (+ (length octets) +queued-message-octets+)))
        (when (and (fifo-empty-p inbox) (> (fifo-capacity inbox) +inbox-keep-entries+))
          (setf (call-inbox call) nil))
        (values octets length compressed)))))

(defun %receiver-reading-p (call)
  "Lock held: the application is reading the message being assembled.  A
server reads the one request of a unary or server-streaming call at once;
otherwise a thread must be waiting with no other message queued."
  (declare (type call call))
  (or (and (eq (call-role call) :server)
           (member (call-kind call) '(:unary :server-streaming)))
      ;; A handler run per message reads whenever none waits for it.
      (and (or (plusp (call-waiters call)) (each-message-call-p call))
           (let ((inbox (call-inbox call)))
             (or (null inbox) (fifo-empty-p inbox))))))

(defun %start-reading (call)
  "Lock held: a receiver is about to wait for the next message, with none
queued.  It is reading the message being assembled: the octets of it held
so far go back to the peer, and from now on they go back as they arrive."
  ;; The peer may have waited for us: its time without progress starts now.
  (setf (call-asm-progress-us call) (now-us))
  (let ((held (shiftf (call-asm-held call) 0)))
    (when (and (plusp held) (call-stream call))
      (clgrpc.http2:stream-return-window (call-conn call) (call-stream call) held))))

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
  "Account N flow-control octets of the message being assembled: returned
now (the result) if the application is reading it, else held until it is."
  (declare (type call call) (type fixnum n))
  (if (%receiver-reading-p call)
      n
      (progn (incf (call-asm-held call) n) 0)))

(defun %take-held (call)
  (shiftf (call-asm-held call) 0))

;;; A message that stops arriving midway.  The peer is waited for only
;;; while the application reads the message (its window is open then); a
;;; message nobody asked for yet may wait on us, not on the peer.  Without
;;; this, a peer could hold an assembly buffer and a stream for as long as
;;; it keeps the connection.

(defun %watch-partial-message (call)
  "Lock held: octets of a message arrived and more are due.  If none come
for the connection's receive-stall timeout while the application reads it,
the call fails (%PARTIAL-MESSAGE-CHECK)."
  (let ((timeout (clgrpc.http2:connection-receive-stall-timeout (call-conn call))))
    (when timeout
      (let ((now (now-us)))
        (setf (call-asm-progress-us call) now)
        (unless (call-stall-timer call)
          (setf (call-stall-timer call)
                (schedule-timer #'%partial-message-check call (+ now (the fixnum timeout)))))))))

(defun %partial-message-check (call)
  "Scheduler thread: CALL's message was partial at its last progress plus
the timeout.  Fail it if it still is and nothing came meanwhile; else look
again a timeout after the last progress."
  (let ((conn (call-conn call)))
    (clgrpc.http2:with-connection-lock (conn)
      (let ((timer (call-stall-timer call)))
        ;; A firing that lost its race with CANCEL-TIMER finds no timer,
        ;; or the one armed since: it is stale.
        (when (or (null timer) (timer-pending-p timer))
          (return-from %partial-message-check)))
      (setf (call-stall-timer call) nil)
      (let ((timeout (clgrpc.http2:connection-receive-stall-timeout conn))
            (now (now-us)))
        (when (and timeout (null (call-status call)) (plusp (call-asm-prefix call)))
          (let ((due (+ (call-asm-progress-us call) (the fixnum timeout))))
            (declare (type fixnum due))
            (cond ((< now due)
                   (setf (call-stall-timer call) (schedule-timer #'%partial-message-check call due)))
                  ((not (%receiver-reading-p call))
                   (setf (call-stall-timer call)
                         (schedule-timer #'%partial-message-check call (+ now (the fixnum timeout)))))
                  (t
                   (%fail-call call (if (eq (call-role call) :server) +cancelled+ +unavailable+)
                               (format nil "a message stopped arriving: no octets of it for ~D s"
                                       (round (the fixnum timeout) 1000000)))
                   (clgrpc.http2:request-flush conn)))))))))

(defconstant +assembly-start+ 16384
  "The most an assembly buffer holds before octets arrive for it.  A
message's declared length is a limit, never an allocation: a peer that
declares 4 MiB and sends one octet costs this much, not 4 MiB.")

(defun %charge (call octets)
  "Lock held: charge OCTETS that CALL holds to its connection's memory
budget (they go back when the application takes the message, or when the
call is over).  If they do not fit, the call fails with RESOURCE_EXHAUSTED
and the result is NIL."
  (declare (type call call) (type fixnum octets))
  (or (clgrpc.http2:stream-charge (call-conn call) (call-stream call) octets)
      (progn
        ;; Failing the call drops its assembly buffer and that charge.
        (%fail-call call +resource-exhausted+
                    (format nil "~D more octets exceed the memory budget for received messages"
                            octets))
        nil)))

(defun %assembly-buffer (call)
  "CALL's assembly buffer, made (and charged) for the message whose prefix
just arrived; NIL if the budget has no room for it."
  (or (call-asm-buf call)
      (let ((size (min (call-asm-length call) +assembly-start+)))
        (and (%charge call size)
             (setf (call-asm-buf call) (make-obuf size))))))

(defun %assembly-room (call buf n declared)
  "Make room in CALL's assembly buffer BUF for N more octets of a message
of DECLARED octets: it doubles as octets arrive, and never grows past
DECLARED.  NIL if the budget has no room for the growth."
  (declare (type obuf buf) (type fixnum n declared))
  (let ((data (obuf-data buf))
        (want (+ (obuf-fill buf) n)))
    (or (<= want (length data))
        (let ((size (min declared (max want (* 2 (length data))))))
          (when (%charge call (- size (length data)))
            (let ((new (make-octets size)))
              (replace new data :end2 (obuf-fill buf))
              (setf (obuf-data buf) new)))))))

(defun %feed (call conn stream octets start end)
  "Run the DATA payload OCTETS[START,END) through CALL's message assembler
(lock held), returning to the peer the octets the application is reading."
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
                               (unless (%charge call length) (return))
                               (%deliver call (subseq octets body (+ body length)) length
                                         (+ 5 length))
                               (setf start (+ body length)))
                             (progn (incf immediate (%hold-or-return call 5))
                                    (setf start body)))))
                     ;; A prefix split across frames, one octet at a time.
                     (let ((b (aref octets start))
                           (k (call-asm-prefix call)))
                       (if (zerop k)
                           (setf (call-asm-flag call) b (call-asm-length call) 0)
                           (setf (call-asm-length call)
                                 (logior (ash (logand (call-asm-length call) #xffffff) 8) b)))
                       (setf (call-asm-prefix call) (1+ k))
                       (incf start)
                       (incf immediate (%hold-or-return call 1))
                       (when (and (= k 4) (not (%check-prefix call)))
                         (return))
                       (when (and (= k 4) (zerop (call-asm-length call)))
                         (setf (call-asm-prefix call) 0)
                         (%deliver call (make-octets 0) 0 (%take-held call)))))
                 ;; Payload of a message that did not fit in one frame, into
                 ;; a buffer that grows with what arrives (%ASSEMBLY-ROOM).
                 (let* ((buf (or (%assembly-buffer call) (return)))
                        (need (- (call-asm-length call) (obuf-fill buf)))
                        (n (min need (- end start))))
                   (unless (%assembly-room call buf n (call-asm-length call))
                     (return))
                   (obuf-write-bytes buf octets start (+ start n))
                   (incf start n)
                   (incf immediate (%hold-or-return call n))
                   (when (= n need)
                     (setf (call-asm-prefix call) 0)
                     (if (> (length (obuf-data buf)) +assembly-start+)
                         ;; A large message keeps its buffer, and its charge
                         ;; (the buffer is exactly the message): no copy,
                         ;; and the rest of a long stream does not keep it.
                         (progn (setf (call-asm-buf call) nil)
                                (%deliver call (obuf-data buf) (obuf-fill buf) (%take-held call)))
                         (progn (unless (%charge call (obuf-fill buf)) (return))
                                (%deliver call (subseq (obuf-data buf) 0 (obuf-fill buf))
                                          (obuf-fill buf) (%take-held call))
                                (obuf-reset buf)))))))
    (when (plusp immediate)
      (clgrpc.http2:stream-return-window conn stream immediate))
    ;; A timer armed for a partial message stays when it completes: it
    ;; finds nothing partial when it fires, or the next partial message,
    ;; so a stream of large messages costs the scheduler no lock a message.
    ;; It goes when the call is over (%CALL-OVER), so it never keeps one.
    (when (and (plusp (call-asm-prefix call)) (null (call-status call)))
      (%watch-partial-message call))))
