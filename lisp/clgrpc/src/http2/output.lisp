;;;; Sending: frames appended to the connection's output buffer under its
;;;; lock, flow-controlled DATA (6.9), and flushing.
;;;;
;;;; No thread ever blocks on a socket here.  A flush swaps OUT with SPARE
;;;; under the lock and writes SPARE with a non-blocking send(2) and no lock
;;;; held, so other threads keep appending meanwhile; only one thread
;;;; flushes at a time (FLUSHING), and a thread that finds a flush in
;;;; progress just leaves its frames to it, so under load many responses go
;;;; out in one send(2).  What the socket does not take goes back in front
;;;; of OUT, the connection is marked WRITE-BLOCKED and its reactor finishes
;;;; the job when epoll says the socket is writable.
;;;;
;;;; Ways to get output written:
;;;;  - FLUSH-CONNECTION: the calling thread writes what the socket takes now.
;;;;    For a complete unary response or request this is the lowest latency.
;;;;  - WITH-STREAM-OUTPUT: append under the lock, then have it written by
;;;;    the right thread: the reactor at the end of its turn when the caller
;;;;    is the reactor serving the connection; the reactor too when it is in
;;;;    a turn and little is buffered (%LEAVE-FLUSH-TO-REACTOR), so that
;;;;    responses handlers finish while it reads leave together; else the
;;;;    caller at once.
;;;;  - REQUEST-FLUSH (lock held): on the reactor, noted and written once it
;;;;    has processed the frames of its turn; elsewhere the reactor is asked
;;;;    to write, so a streaming handler keeps encoding while the previous
;;;;    batch is written.
;;;;  - the reactor itself, on EPOLLOUT, for a write-blocked connection, and
;;;;    for what a thread left when it had written +TURN-WRITE-OCTETS+.

(in-package #:clgrpc.http2)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

;;; Output is bounded three ways.  DATA senders wait (streaming) or park
;;; (unary responses) once +HIGH-WATER+ octets are buffered, so DATA never
;;; takes the buffer much past it.  What else a peer can make us append --
;;; response heads, trailers, trailers-only answers, ACKs -- costs it one
;;; small frame each; a peer that sends those and never reads would grow the
;;; buffer for ever, so past +READ-PAUSE+ with the socket full its reactor
;;; stops reading it until the output drains below +HIGH-WATER+ (grpc-go's
;;; reader likewise stops when its control replies pile up).  And parked
;;; responses are sent a quantum at a time, round-robin, so one large
;;; response cannot hold small ones behind it.

(defconstant +high-water+ (* 4 1024 1024)
  "Output buffered beyond this makes DATA senders wait for the socket to
drain: flow-control windows alone would let a fast producer buffer without
bound when the peer reads slowly.")

(defconstant +read-pause+ (* 2 +high-water+)
  "Output buffered beyond this, with the socket full, stops reading the
peer until the output drains below +HIGH-WATER+.  Twice the high-water mark,
so DATA, which stops at the mark, never pauses a connection by itself.")

(defconstant +park-quantum+ (* 256 1024)
  "At most this much of one parked response is appended per turn, so
responses on other streams interleave with a large one.")

(defconstant +append-chunk+ 65536
  "A streaming sender appends at most this much before it looks at the
output's size again, whatever frame size the peer allows: so DATA stops
within one chunk per sender of the high-water mark.")

(defconstant +turn-write-octets+ (* 1024 1024)
  "What one thread writes of a connection's output in one go: the reactor
(or a thread it is serving) writes the rest on a later turn, so a large
burst to one peer does not hold the reactor from the others.")

(defconstant +shrink-above+ (* 256 1024)
  "An output buffer that grew beyond this is given back once drained, so a
connection that once sent a large message does not keep its buffer idle.")

;;; ------------------------------------------------------------------
;;; Flushing

(declaim (inline %buffered))
(defun %buffered (conn)
  "Lock held: octets appended and not yet written."
  (+ (obuf-fill (conn-out conn))
     (- (obuf-fill (conn-spare conn)) (conn-spare-pos conn))))

(defun request-flush (conn)
  "Have OUT flushed soon (lock held).  Cheap when a flush is already pending
or in progress."
  (if (reader-thread-p conn)
      (setf (conn-reader-flush conn) t)
      (unless (or (conn-flushing conn) (conn-write-blocked conn) (conn-closed conn)
                  (zerop (obuf-fill (conn-out conn))))
        (%post conn +post-flush+)))
  nil)

(declaim (ftype function %update-interest %resume-parked %mark-closed %leave-flush-to-reactor))

(defconstant +tls-backlog-pause+ (* 256 1024)
  "TLS records waiting for the socket beyond this, with the socket full,
stop reading the peer: writers encrypt a chunk at a time, so only records
OpenSSL makes while reading grow past it (replies to a peer that sends key
updates or renegotiation attempts and reads nothing).")

(defconstant +tls-backlog-resume+ (* 128 1024)
  "Reading resumes once the waiting TLS records are below this.")

(defun %check-read-pause (conn)
  "Lock held: pause reading a peer that makes us buffer past +READ-PAUSE+
while it does not read; resume once the output is below +HIGH-WATER+.
Over TLS the records that wait for the socket count too, against bounds of
their own (+TLS-BACKLOG-PAUSE+)."
  (let* ((tls (conn-tls conn))
         (backlog (if tls (clgrpc.tls:session-pending-octets tls) 0))
         (buffered (+ (%buffered conn) backlog))
         (pause (if (conn-read-paused conn)
                    (or (> buffered +high-water+) (> backlog +tls-backlog-resume+))
                    (and (conn-write-blocked conn)
                         (or (> buffered +read-pause+) (> backlog +tls-backlog-pause+))))))
    (unless (eq pause (conn-read-paused conn))
      (setf (conn-read-paused conn) pause)
      (unless (conn-closed conn)
        (%update-interest conn)))))

(defun %drained (conn)
  "Lock held: everything buffered has been written."
  (setf (conn-control-queued conn) 0
        (conn-spare-pos conn) 0)
  (when (> (length (obuf-data (conn-spare conn))) +shrink-above+)
    (setf (conn-spare conn) (make-obuf 512)))
  (when (and (> (length (obuf-data (conn-out conn))) +shrink-above+)
             (zerop (obuf-fill (conn-out conn))))
    (setf (conn-out conn) (make-obuf 512)))
  (%check-read-pause conn)
  (clgrpc.util:broadcast-if-waiting (conn-drain-waiters conn) (conn-drain-cv conn)))

(defun %next-output (conn)
  "Lock held, SPARE written out: move OUT to SPARE for writing, first
letting parked responses take their turn if OUT is empty.  Returns true if
there is anything to write."
  (when (and (conn-parked conn) (<= (obuf-fill (conn-out conn)) +park-quantum+)
             (not (conn-closed conn)))
    ;; Parked responses take their turn whenever little else waits, not
    ;; only when nothing does: under steady load OUT is rarely empty.
    (%resume-parked conn))
  (unless (zerop (obuf-fill (conn-out conn)))
    (obuf-reset (conn-spare conn))
    (setf (conn-spare-pos conn) 0)
    (rotatef (conn-out conn) (conn-spare conn))
    t))

(declaim (inline %tls-handshaking-p))
(defun %tls-handshaking-p (conn)
  "CONN speaks TLS and its handshake is not complete: no frame can go out."
  (let ((tls (conn-tls conn)))
    (and tls (not (clgrpc.tls:tls-session-established tls)))))

(declaim (inline %tls-output-pending-p))
(defun %tls-output-pending-p (conn)
  "Lock held: TLS records (or handshake messages) wait for the socket."
  (let ((tls (conn-tls conn)))
    (and tls (clgrpc.tls:session-output-pending-p tls))))

(defun %write-some (conn octets start end)
  "Write what the socket takes now of OCTETS[START,END), encrypted if CONN
speaks TLS.  Returns the octet count taken and, second, true if the socket
is full (for TLS: records wait for it, even if all of the octets were
taken); NIL if the connection failed."
  (declare (type octets octets) (type fixnum start end))
  (let ((tls (conn-tls conn)))
    (if tls
        (clgrpc.tls:session-write-some tls (conn-fd conn) octets start end)
        (let ((n (clgrpc.net:fd-write-some (conn-fd conn) octets start end)))
          (and n (values n (< (+ start (the fixnum n)) end)))))))

(defun %handshake-write-out (conn)
  "Lock held, TLS handshake under way: only the handshake's own messages
go out; frames wait in OUT until it is complete (tls-io.lisp)."
  (unless (eq (clgrpc.tls:session-send-pending (conn-tls conn) (conn-fd conn)) :done)
    (setf (conn-write-blocked conn) t)
    (%update-interest conn))
  t)

(defun %may-wait-for-drain-p (conn)
  "Lock held: whether this thread may wait for CONN's output to drain.  Not
the reactor serving CONN, nor the thread writing it out (a parked response
it resumes appends here): each is what would drain it."
  (not (or (reader-thread-p conn)
           (eq (conn-flushing conn) sb-thread:*current-thread*))))

(defun %write-out (conn resume)
  "Write until nothing is buffered, the socket is full, or this thread has
written +TURN-WRITE-OCTETS+ (the reactor then writes the rest on a later
turn).  RESUME: the reactor continuing a write-blocked connection.  Returns
NIL if the connection failed (it is then closed)."
  (let ((lock (conn-lock conn))
        (buf nil)
        (pos 0)
        (written 0))
    (declare (type fixnum pos written))
    (clgrpc.util:with-worker-mutex (lock)
      (when (and resume (conn-write-blocked conn))
        (setf (conn-write-blocked conn) nil)
        (%update-interest conn))
      (when (or (conn-flushing conn) (conn-write-blocked conn) (conn-closed conn))
        (return-from %write-out t))
      (when (%tls-handshaking-p conn)
        (return-from %write-out (%handshake-write-out conn)))
      ;; The unsent rest of an earlier write goes first.
      (unless (or (< (conn-spare-pos conn) (obuf-fill (conn-spare conn)))
                  (%next-output conn)
                  (%tls-output-pending-p conn))
        (return-from %write-out t))
      (setf (conn-flushing conn) sb-thread:*current-thread*
            buf (conn-spare conn)
            pos (conn-spare-pos conn)))
    (loop
      (multiple-value-bind (n blocked) (%write-some conn (obuf-data buf) pos (obuf-fill buf))
        (when (and n (plusp (the fixnum n)))
          (incf written (the fixnum n))
          (setf (conn-wrote-us conn) (clgrpc.util:now-us)))
        (clgrpc.util:with-worker-mutex (lock)
          (cond ((null n)
                 (obuf-reset buf)
                 (setf (conn-flushing conn) nil)
                 (%drained conn)
                 (return))
                (blocked
                 ;; The socket is full: the reactor writes the rest, from
                 ;; where this write stopped, when the socket drains.
                 (setf (conn-spare-pos conn) (+ pos (the fixnum n))
                       (conn-flushing conn) nil
                       (conn-write-blocked conn) t)
                 (unless (conn-closed conn)
                   (%update-interest conn)
                   (%check-read-pause conn))
                 (clgrpc.util:broadcast-if-waiting (conn-drain-waiters conn) (conn-drain-cv conn))
                 (return-from %write-out t))
                ((>= written +turn-write-octets+)
                 ;; This thread's share is written: the reactor goes on
                 ;; with the rest, from where this stopped, once it has
                 ;; served its other connections.
                 (setf (conn-spare-pos conn) (+ pos (the fixnum n))
                       (conn-flushing conn) nil)
                 (when (= (conn-spare-pos conn) (obuf-fill buf))
                   (obuf-reset buf)
                   (setf (conn-spare-pos conn) 0))
                 (unless (conn-closed conn)
                   (%post conn +post-flush+))
                 (clgrpc.util:broadcast-if-waiting (conn-drain-waiters conn) (conn-drain-cv conn))
                 (return-from %write-out t))
                ((< (+ pos (the fixnum n)) (obuf-fill buf))
                 ;; TLS encrypts a chunk per call: on with the next.
                 (incf pos (the fixnum n)))
                (t
                 ;; All of it went: the next turn, if any (parked responses
                 ;; see the output empty now).  TLS records that the
                 ;; reactor made while reading (a key update's reply) go
                 ;; too: it left them to this flush if it found one under
                 ;; way.
                 (obuf-reset buf)
                 (setf (conn-spare-pos conn) 0)
                 (if (or (conn-closed conn)
                         (not (or (%next-output conn) (%tls-output-pending-p conn))))
                     (progn (setf (conn-flushing conn) nil)
                            (%drained conn)
                            (return-from %write-out t))
                     (setf buf (conn-spare conn) pos 0)))))))
    (connection-close conn :code +internal-error+)
    nil))
(defun %reader-flush (conn)
  "Reactor: write what the frames of the last read queued."
  (setf (conn-reader-flush conn) nil)
  (%write-out conn nil))

(defun %output-turn-ends (conn)
  "Lock held, after appending: true if the reactor serving CONN writes it,
with the rest of its turn (this is that reactor, or it is in a turn and
takes it: %LEAVE-FLUSH-TO-REACTOR); NIL if this thread is to write."
  (cond ((reader-thread-p conn)
         (setf (conn-reader-flush conn) t)
         t)
        ;; Another thread's write in progress takes this output too; a
        ;; write-blocked connection's reactor writes on EPOLLOUT; a closed
        ;; one writes nothing: %WRITE-OUT returns at once for all three.
        ((or (conn-flushing conn) (conn-write-blocked conn) (conn-closed conn)) nil)
        (t (%leave-flush-to-reactor conn))))

(defmacro with-stream-output ((conn) &body body)
  "Run BODY with CONN's lock held, then have what it appended written: by
the reactor serving CONN, with the rest of its turn, when this is that
reactor or it is in a turn and little is buffered; otherwise by this
thread now, as far as the socket takes it (the reactor writes the rest).
Returns BODY's values."
  (let ((c (gensym "CONN")) (reader (gensym "READER")))
    `(let ((,c ,conn) (,reader nil))
       (multiple-value-prog1
           (with-connection-lock (,c)
             (multiple-value-prog1 (progn ,@body)
               (setf ,reader (%output-turn-ends ,c))))
         (unless ,reader
           (%write-out ,c nil))))))

(defun flush-connection (conn &key wait (timeout 5))
  "Write what is buffered, from this thread, as far as the socket takes it
now; the reactor writes the rest.  With WAIT, return only once everything
buffered so far has been written (needed before shutting the socket down),
or after TIMEOUT seconds.  Returns NIL if the connection failed or WAIT
timed out."
  (unless (%write-out conn nil)
    (return-from flush-connection nil))
  (if (not wait)
      t
      (let ((deadline (+ (clgrpc.util:now-us) (round (* timeout 1000000)))))
        (with-connection-lock (conn)
          (loop
            (when (conn-closed conn)
              (return nil))
            (unless (or (conn-flushing conn) (conn-write-blocked conn)
                        (plusp (obuf-fill (conn-out conn))))
              (return t))
            (when (%tls-handshaking-p conn)
              ;; Frames cannot go before the handshake is done: waiting
              ;; for them would wait for the peer.
              (return nil))
            (unless (clgrpc.util:counted-wait ((conn-drain-waiters conn))
                      (clgrpc.util:wait-on (conn-drain-cv conn) (conn-lock conn) deadline))
              (return nil)))))))

;;; ------------------------------------------------------------------
;;; Streams we open

(defun open-stream (conn user &optional deadline-us)
  "A new client stream for USER, registered with the next odd identifier.
Waits for the peer's first SETTINGS (as grpc-go waits for the server's
preface: until then its SETTINGS_MAX_CONCURRENT_STREAMS is unknown), and
while that limit is reached, until DEADLINE-US if given.  The caller must write its HEADERS before releasing
the lock, so identifiers reach the wire in increasing order (5.1.1).
Returns NIL if the connection can take no more streams (closed, GOAWAY,
identifiers exhausted), :TIMEOUT if the deadline passed first."
  (loop
    (when (or (conn-closed conn) (conn-goaway-received conn) (conn-goaway-sent conn)
              (> (conn-next-stream-id conn) +max-window-size+))
      (return nil))
    (let ((limit (conn-peer-max-concurrent conn)))
      (when (and (conn-peer-settings-seen conn)
                 (or (null limit) (< (conn-active-local conn) limit)))
        (let* ((id (conn-next-stream-id conn))
               (stream (%new-stream conn id :open user)))
          (setf (conn-next-stream-id conn) (+ id 2)
                (gethash id (conn-streams conn)) stream)
          (incf (conn-active-local conn))
          (return stream))))
    (unless (clgrpc.util:counted-wait ((conn-window-waiters conn))
              (clgrpc.util:wait-on (conn-window-cv conn) (conn-lock conn) deadline-us))
      (return :timeout))))

;;; ------------------------------------------------------------------
;;; Frames (lock held)

(defun header-list-size (headers)
  "The size of HEADERS as SETTINGS_MAX_HEADER_LIST_SIZE counts it (6.5.2):
name and value lengths plus 32 per field."
  (loop for h in headers
        sum (+ 32 (length (the string (car h)))
               (length (the string (if (consp (cdr h)) (second h) (cdr h)))))))

(defun header-list-fits-p (conn headers)
  "Lock held: HEADERS are within the peer's SETTINGS_MAX_HEADER_LIST_SIZE."
  (let ((limit (conn-peer-max-header-list-size conn)))
    (or (null limit) (<= (header-list-size headers) (the fixnum limit)))))

(defun stream-write-headers (conn stream headers &key end-stream)
  "A header block for STREAM: HEADERS (+ CONTINUATION if larger than the
peer's SETTINGS_MAX_FRAME_SIZE).  HEADERS is a list of (name . value) or
(name value indexing); see CLGRPC.HPACK:ENCODE-HEADER-BLOCK."
  (declare (type h2-stream stream))
  (let* ((out (conn-out conn))
         (before (obuf-fill out))
         (pos (begin-frame out +frame-headers+
                           (logior +flag-end-headers+ (if end-stream +flag-end-stream+ 0))
                           (h2-stream-id stream))))
    (handler-bind ((serious-condition
                     (lambda (e)
                       ;; No half-written frame stays in OUT.  Bad input is
                       ;; refused before the encoder changes its table; any
                       ;; other failure leaves the table unknown to the peer,
                       ;; so the connection cannot go on.
                       (setf (obuf-fill out) before)
                       (unless (typep e 'clgrpc.hpack:hpack-error)
                         (%mark-closed conn +internal-error+)
                         (%post conn +post-close+)))))
      (clgrpc.hpack:encode-header-block (%encoder conn) out headers))
    (finish-headers-frame out pos (conn-peer-max-frame-size conn))
    (setf (conn-reset-ping-strikes conn) t)
    (when end-stream
      (%stream-end-local conn stream))
    t))

(defun %stream-send-window (conn stream)
  "Octets of DATA STREAM may send now."
  (max 0 (min (conn-send-window conn) (stream-send-window conn stream))))

(defun %append-data (conn stream octets start end end-stream)
  "DATA frames for OCTETS[START,END) on STREAM, split by the peer's maximum
frame size, charged to the send windows, which the caller has checked."
  (declare (type h2-stream stream) (type octets octets) (type index start end))
  (let ((out (conn-out conn))
        (frame (conn-peer-max-frame-size conn)))
    (declare (type fixnum frame))
    (loop
      (let* ((n (min (- end start) frame))
             (last (= (+ start n) end)))
        (write-data-frame out (h2-stream-id stream) octets
                          :start start :end (+ start n) :end-stream (and last end-stream))
        (decf (conn-send-window conn) n)
        (decf (h2-stream-send-window stream) n)
        (incf start n)
        (when last (return))))
    (setf (conn-reset-ping-strikes conn) t)
    (when end-stream
      (%stream-end-local conn stream))))

(defun %wait-for-sending (conn queue deadline)
  "Lock held: wait on QUEUE, for window or for the output to drain, until
DEADLINE (NOW-US).  NIL once the deadline passed."
  (%request-flush-for-waiter conn)
  (clgrpc.util:wait-on queue (conn-lock conn) deadline))

(defun %request-flush-for-waiter (conn)
  "Lock held: a sender is about to wait: let the peer see what is buffered,
so it can answer with WINDOW_UPDATE, and the socket drain."
  (request-flush conn))

(defun stream-write-data (conn stream octets start end &key end-stream)
  "Lock held: DATA frames for OCTETS[START,END) on STREAM, waiting (lock
released) for flow-control window and for the output to drain below
+HIGH-WATER+ as needed.  For threads that may block: streaming senders.  A
message larger than +PARK-QUANTUM+ takes turns: after each quantum, while
more than a quantum is buffered, it waits for the output to drain, so what
other streams appended meanwhile goes out between its parts.  No wait
lasts longer than the connection's SEND-STALL-TIMEOUT without progress:
then the stream is reset (CANCEL).  Returns T; NIL if the stream or
connection closed first; :STALLED if the peer took nothing for that long."
  (declare (type h2-stream stream) (type octets octets) (type index start end))
  ;; The stall deadline is read from the clock only once a wait begins, and
  ;; forgotten on progress: a message that fits needs no clock at all.
  (let ((since-turn 0)
        (deadline nil))
    (declare (type fixnum since-turn) (type (or null fixnum) deadline))
    (flet ((deadline ()
             (or deadline
                 (setf deadline (+ (clgrpc.util:now-us) (conn-send-stall-timeout conn))))))
      (loop
        (when (or (conn-closed conn) (not (stream-can-send-p stream)))
          (setf (h2-stream-mid-message stream) nil)
          (return nil))
        (let* ((remaining (- end start))
               (n (min remaining +append-chunk+ (%stream-send-window conn stream)))
               (waited
                 (cond ((and (> (%buffered conn) +high-water+)
                             (%may-wait-for-drain-p conn))
                        ;; Whoever else is appending, DATA stops at the mark:
                        ;; each chunk checks again, and a flush is under way
                        ;; to drain it.
                        (clgrpc.util:counted-wait ((conn-drain-waiters conn))
                          (%wait-for-sending conn (conn-drain-cv conn) (deadline))))
                       ((and (>= since-turn +park-quantum+)
                             (> (%buffered conn) +park-quantum+)
                             (%may-wait-for-drain-p conn))
                        (setf since-turn 0)
                        (clgrpc.util:counted-wait ((conn-drain-waiters conn))
                          (%wait-for-sending conn (conn-drain-cv conn) (deadline))))
                       ((or (plusp n) (zerop remaining))
                        ;; An empty DATA frame needs no window (6.9.1): gRPC
                        ;; clients half-close with one.
                        (let ((last (= n remaining)))
                          (%append-data conn stream octets start (+ start n) (and last end-stream))
                          (incf start n)
                          (incf since-turn n)
                          (setf (h2-stream-mid-message stream) (not last)
                                deadline nil)
                          (when last
                            (return t))
                          t))
                       ((<= (stream-send-window conn stream) 0)
                        ;; Out of stream window: wait for its WINDOW_UPDATE
                        ;; (or a larger initial window).
                        (%wait-for-stream-window conn stream)
                        (let ((cv (or (h2-stream-send-cv stream)
                                      (setf (h2-stream-send-cv stream) (sb-thread:make-waitqueue)))))
                          (clgrpc.util:counted-wait ((h2-stream-send-waiters stream))
                            (%wait-for-sending conn cv (deadline)))))
                       (t
                        ;; Out of connection window.
                        (clgrpc.util:counted-wait ((conn-send-waiters conn))
                          (%wait-for-sending conn (conn-send-cv conn) (deadline)))))))
          ;; Output the socket took counts as progress too: the peer reads.
          (when deadline
            (setf deadline (max deadline (+ (conn-wrote-us conn) (conn-send-stall-timeout conn)))))
          (unless (or waited (< (clgrpc.util:now-us) (deadline))
                      (conn-closed conn) (not (stream-can-send-p stream)))
            ;; The peer opened no window and read nothing for the whole
            ;; stall timeout: this sender gives up, and its stream goes.
            (setf (h2-stream-mid-message stream) nil)
            (stream-reset conn stream +cancel+)
            (request-flush conn)
            (return :stalled)))))))

(defun %parkable-window (conn stream wanted)
  "How much of WANTED octets a parked or parkable response may append now
without waiting: what the windows allow, at most a quantum, and nothing
while the output is over the high-water mark (it resumes as it drains)."
  (declare (type fixnum wanted))
  (if (> (%buffered conn) +high-water+)
      0
      (min wanted +park-quantum+ (%stream-send-window conn stream))))

(defconstant +kept-slack-divisor+ 4
  "A response buffer given to STREAM-WRITE-LAST-DATA is parked as it is if
it holds no more than a quarter beyond what waits in it; otherwise what
waits is copied out, so that parked memory stays close to what is charged.")

(defun %keep-given-p (octets start end given)
  "Whether OCTETS[START,END), which the caller GIVEN away, may be parked as
they are rather than copied: a copy of a large response costs as much
again, and the caller would drop the buffer anyway."
  (declare (type octets octets) (type index start end))
  (let ((n (- end start)))
    (and given (<= (length octets) (+ n (floor n +kept-slack-divisor+))))))

(defun stream-write-last-data (conn stream octets start end then &key end-stream given)
  "Lock held: the last DATA of STREAM's response, OCTETS[START,END), as far
as the windows and the output allow now, never waiting; then THEN, a
function of CONN and STREAM (the trailers).  What cannot go now is parked
on STREAM, sent a quantum at a time as the peer's WINDOW_UPDATEs arrive and
the output drains, and THEN is called once it is all written: so a peer
that advertises no window or does not read holds no thread.  What is
parked is a copy, unless the caller GIVEN OCTETS away, when they may be
kept as they are.  The output is flushed by the thread the reactor serves
CONN on once its turn is done, or the next time any thread writes.
END-STREAM ends the stream with the last DATA frame.  Returns T if all of
it went now, :PARKED, NIL if the stream or connection closed, or
:OVER-BUDGET, having written nothing, if what it parks would not fit in
the memory budget (STREAM-CHARGE).  A second value is true if OCTETS
themselves were parked: the caller must not write to them again."
  (declare (type h2-stream stream) (type octets octets) (type index start end)
           (type function then))
  (when (or (conn-closed conn) (not (stream-can-send-p stream)))
    (return-from stream-write-last-data nil))
  (let* ((n (%parkable-window conn stream (- end start)))
         (keep (%keep-given-p octets (+ start n) end given))
         ;; What is held is charged: a kept buffer whole.
         (charge (if keep (length octets) (- end start n))))
    (declare (type fixnum n charge))
    (when (and (< n (- end start))
               (not (stream-charge conn stream charge :parking t))
               ;; A copy holds less, and may fit where the buffer does not.
               (not (and keep
                         (setf keep nil charge (- end start n))
                         (stream-charge conn stream charge :parking t))))
      (return-from stream-write-last-data :over-budget))
    (when (or (plusp n) (and end-stream (= start end)))
      (%append-data conn stream octets start (+ start n) (and end-stream (= (+ start n) end))))
    (incf start n)
    (cond ((= start end)
           (funcall then conn stream)
           t)
          (t
           (setf (h2-stream-parked stream) (if keep octets (subseq octets start end))
                 (h2-stream-parked-start stream) (if keep start 0)
                 (h2-stream-parked-end stream) (if keep end (- end start))
                 (h2-stream-parked-charge stream) charge
                 (h2-stream-parked-end-stream stream) end-stream
                 (h2-stream-parked-then stream) then)
           (setf (conn-parked conn) (nconc (conn-parked conn) (list stream)))
           (request-flush conn)
           (values :parked keep)))))

(defun %resume-parked (conn)
  "Lock held, after the send windows grew or the output drained: one turn
of the parked responses, in order, each sending what it may of a quantum,
until the output is over the high-water mark (the rest go first next
time, as the output drains).  A response finished calls its continuation;
the others go round again.  A turn is bounded by the parked streams, at
most the connection's handler slots."
  (let ((still '())
        (queue (shiftf (conn-parked conn) '())))
    (loop while (and queue (<= (%buffered conn) +high-water+))
          do (let* ((stream (pop queue))
                    (data (h2-stream-parked stream)))
               (when (and data (stream-can-send-p stream) (not (conn-closed conn)))
                 (let* ((start (h2-stream-parked-start stream))
                        (end (h2-stream-parked-end stream))
                        (n (%parkable-window conn stream (- end start))))
                   (declare (type fixnum start end n))
                   (when (plusp n)
                     (%append-data conn stream data start (+ start n)
                                   (and (h2-stream-parked-end-stream stream) (= (+ start n) end)))
                     (setf (h2-stream-parked-start stream) (incf start n)))
                   (if (= start end)
                       (let ((then (h2-stream-parked-then stream)))
                         (setf (h2-stream-parked stream) nil
                               (h2-stream-parked-then stream) nil)
                         (stream-discharge conn stream (h2-stream-parked-charge stream))
                         (funcall (the function then) conn stream))
                       (push stream still))))))
    ;; Streams not visited keep their place at the front; those visited go
    ;; round behind them, and streams parked by the continuations above
    ;; queue behind those.
    (setf (conn-parked conn) (nconc queue (nreverse still) (conn-parked conn)))
    nil))

(defun stream-reset (conn stream error-code)
  "Send RST_STREAM for STREAM and close it (no callback: the caller knows)."
  (declare (type h2-stream stream))
  (unless (or (eq (h2-stream-state stream) :closed) (zerop (h2-stream-id stream)))
    (write-rst-stream-frame (conn-out conn) (h2-stream-id stream) error-code)
    (%close-stream conn stream :reset-sent)))

(defun stream-return-window (conn stream n)
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
            (request-flush conn))
          (setf (h2-stream-recv-unacked stream) unacked)))))

;;; Lock-taking conveniences.

(defun reset-stream (conn stream error-code)
  (with-connection-lock (conn)
    (stream-reset conn stream error-code)
    (request-flush conn)))

(defun stream-consumed (conn stream n)
  (with-connection-lock (conn)
    (stream-return-window conn stream n)))
