;;;; The HTTP/2 connection object: settings of both endpoints, the stream
;;;; table and identifier rules (5.1.1), flow-control windows (5.2, 6.9),
;;;; the output buffers, and the limits that protect a server from its peers.
;;;;
;;;; Concurrency model.  No thread belongs to a connection.  A reactor
;;;; (reactor.lisp: one epoll thread per core, shared by every connection of
;;;; the process) reads and parses its frames; any thread may write.  A
;;;; single mutex (LOCK) guards all mutable state: the stream table, windows,
;;;; the HPACK encoder (header blocks must reach the wire in encoding order)
;;;; and the output buffer.  The application (gRPC) keeps its per-stream
;;;; state under the same lock: the reactor invokes its callbacks with the
;;;; lock held, so there is no lock ordering to get wrong and a DATA frame
;;;; costs one lock acquisition.  Callbacks must not block; they use the
;;;; functions that expect the lock held (the exported STREAM-... ones, and
;;;; the %-named ones inside this package), and leave anything longer to
;;;; HAND-OFF (the connection's executor) or DEFER-TO-READER.
;;;;
;;;; Frames are appended to OUT and written by whoever flushes (output.lisp),
;;;; always without blocking: what the socket does not take is finished by
;;;; the reactor when the socket becomes writable again.

(in-package #:clgrpc.http2)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

;;; Memory budgets (budget.lisp, after the connection it reads).
(declaim (ftype function stream-discharge-all %count-call))

(defconstant +recent-closed-count+ 64
  "How many closed stream identifiers we remember, to answer late frames on
them as RFC 9113 5.1 asks (STREAM_CLOSED after END_STREAM both ways).  Older
closed streams are not errors: their late frames are ignored, as grpc-go
does, since a busy connection closes thousands of streams a second.")

;;; Work a connection can ask of its reactor (bits of CONN-POSTED).
(defconstant +post-flush+ 1)            ; write OUT
(defconstant +post-close+ 2)            ; release the socket now
(defconstant +post-drain-close+ 4)      ; flush, then release the socket

(defstruct (connection-limits (:conc-name limits-))
  "What a server tolerates from a peer.  Times in microseconds, NIL for no
limit.  The defaults are grpc-go's where grpc-go has the knob."
  ;; The peer's preface and first SETTINGS must arrive within this
  ;; (grpc-go's ConnectionTimeout on a server, its connect deadline on a
  ;; client).
  (handshake-timeout 120000000 :type (or null fixnum))
  ;; Keepalive (gRPC's A8 and grpc-go's keepalive.ServerParameters): ping a
  ;; peer silent for TIME, close if the ACK takes longer than TIMEOUT;
  ;; GOAWAY after MAX-IDLE without streams, or at MAX-AGE, closing GRACE
  ;; later.
  (keepalive-time 7200000000 :type (or null fixnum))
  (keepalive-timeout 20000000 :type fixnum)
  (max-idle nil :type (or null fixnum))
  (max-age nil :type (or null fixnum))
  (max-age-grace nil :type (or null fixnum))
  ;; Keepalive enforcement (keepalive.EnforcementPolicy): pings closer than
  ;; MIN-PING-INTERVAL, or any ping without an open stream unless
  ;; PERMIT-WITHOUT-STREAM, are strikes; more than two strikes between
  ;; two of our HEADERS or DATA frames get GOAWAY ENHANCE_YOUR_CALM.  On a
  ;; client, PERMIT-WITHOUT-STREAM lets its keepalive ping with no stream
  ;; open (keepalive.ClientParameters).
  (min-ping-interval 300000000 :type fixnum)
  (permit-without-stream nil)
  ;; Replies (SETTINGS and PING ACKs, RST_STREAM) queued while the peer does
  ;; not read: beyond this, GOAWAY ENHANCE_YOUR_CALM.
  (max-queued-control-frames 1000 :type fixnum)
  ;; Streams the peer cancelled before their handler finished, per second:
  ;; beyond this, GOAWAY ENHANCE_YOUR_CALM (HTTP/2 Rapid Reset).
  (max-early-resets-per-second 1000 :type fixnum)
  ;; A message that stops arriving midway, while the application reads it,
  ;; fails its call after this long without an octet of it (gRPC layer);
  ;; a server connection that holds streams and sends nothing at all for
  ;; this long is pinged, and closed unless it answers in KEEPALIVE-TIMEOUT.
  (receive-stall-timeout 30000000 :type (or null fixnum)))

(defvar *default-limits* (make-connection-limits))

(defstruct (connection (:constructor %make-connection) (:conc-name conn-))
  (role :server :type (member :client :server))
  (socket nil)
  (fd -1 :type fixnum)
  ;; A clgrpc.tls session when the connection speaks TLS: the socket then
  ;; carries its ciphertext (tls-io.lisp).
  (tls nil :type (or null clgrpc.tls:tls-session))
  (lock (sb-thread:make-mutex :name "h2 connection") :type sb-thread:mutex)
  ;; Broadcast when a stream closes or a stream slot frees up, at GOAWAY, a
  ;; PING ACK, or when the connection closes: what opening streams, pings
  ;; and shutdown wait for.
  (window-cv (sb-thread:make-waitqueue) :type sb-thread:waitqueue)
  (window-waiters 0 :type fixnum)       ; threads waiting on WINDOW-CV (COUNTED-WAIT)
  ;; Senders waiting for the connection's send window: woken by a
  ;; connection WINDOW_UPDATE only.  Those waiting for a stream's window
  ;; wait on that stream (SEND-CV), so an update wakes only its own.
  (send-cv (sb-thread:make-waitqueue) :type sb-thread:waitqueue)
  (send-waiters 0 :type fixnum)
  ;; ---- the reactor that reads this connection (reactor.lisp)
  (reactor nil)
  (registered nil)                      ; in the reactor's table and epoll set
  (finished nil)                        ; the socket is released
  (posted 0 :type fixnum)               ; reactor work queued: bits of +POST-...+
  ;; A partial frame carried between reads; NIL while none (idle
  ;; connections hold no read buffer).
  (carry nil :type (or null octets))
  (carry-start 0 :type fixnum)          ; CARRY[CARRY-START,CARRY-FILL) is unprocessed
  (carry-fill 0 :type fixnum)
  (preface-seen 0 :type fixnum)         ; server: octets of the client preface read
  ;; What the turn at hand may still process (reactor-turn.lisp), and whether
  ;; whole frames wait in CARRY because an earlier turn ran out of it.
  (turn-frames 0 :type fixnum)
  (turn-octets 0 :type fixnum)
  (input-pending nil)
  ;; A TLS handshake step runs on a worker (tls-io.lisp): the reactor does
  ;; not read the connection meanwhile.
  (handshake-running nil)
  (handshake-result nil)                ; what the step returned (tls-io.lisp)
  ;; After a connection error: input is read and dropped until this time, so
  ;; the peer reads our GOAWAY before the close (a close with unread input
  ;; sends a TCP RST).
  (linger-until nil :type (or null fixnum))
  ;; ---- output (output.lisp); small until a burst needs more
  (out (make-obuf 512) :type obuf)
  (spare (make-obuf 512) :type obuf)
  ;; SPARE[SPARE-POS,fill) is the unsent rest of a write the socket did not
  ;; take whole; it goes out before anything appended to OUT since.
  (spare-pos 0 :type fixnum)
  (flushing nil)                        ; the thread writing SPARE to the socket, if any
  (write-blocked nil)                   ; the socket is full: the reactor waits for EPOLLOUT
  (reader-flush nil)                    ; the reactor queued frames it will write itself
  ;; Reactor: until when the replies of a turn that handed off a handler may
  ;; wait for that handler's response to carry them (reactor-turn.lisp).
  (replies-held-until nil :type (or null fixnum))
  (control-queued 0 :type fixnum)       ; ACKs and resets queued since the socket last drained
  ;; The peer does not read what it asks for: the reactor stops reading it
  ;; until the output drains (output.lisp, %CHECK-READ-PAUSE).
  (read-paused nil)
  ;; Work the frames of the read at hand produced, newest first (function,
  ;; argument, ...): DEFERRED runs on the reactor once it has released the
  ;; lock, HANDOFF goes to EXECUTOR in one batch (DEFER-TO-READER, HAND-OFF).
  ;; Only the reactor thread touches them.
  (deferred '() :type list)
  (handoff '() :type list)
  (handoff-responds nil)                ; HANDOFF has work that answers at once
  ;; Where handed-off work runs (a clgrpc.util executor; a server's), and
  ;; the executor lane this connection's reactor fills.
  (executor nil)
  (lane 0 :type fixnum)
  ;; When the socket last took output (NOW-US): a live reader, for the
  ;; senders' stall timeout.
  (wrote-us 0 :type fixnum)
  ;; A sender may wait this long (microseconds) for window or for the
  ;; output to drain with no progress before its stream fails
  ;; (STREAM-WRITE-DATA).
  (send-stall-timeout 120000000 :type fixnum)
  (drain-cv (sb-thread:make-waitqueue) :type sb-thread:waitqueue)
  (drain-waiters 0 :type fixnum)        ; threads waiting on DRAIN-CV (COUNTED-WAIT)
  ;; Streams with DATA parked for lack of window (%WRITE-DATA-OR-PARK).
  (parked '() :type list)
  ;; ---- HPACK; the decoder is only touched by the reactor.  The encoder
  ;; (its index is a hash table seeded with the static table's names) is
  ;; made for the first header block this side sends (%ENCODER), so that an
  ;; idle connection holds none; the peer's SETTINGS_HEADER_TABLE_SIZE waits
  ;; for it, with the smallest size the peer set meanwhile, which the first
  ;; block must announce before the last (RFC 7541, 4.2).
  (encoder nil :type (or null clgrpc.hpack:encoder))
  (peer-header-table-size 4096 :type fixnum)
  (peer-header-table-min 4096 :type fixnum)
  (decoder (clgrpc.hpack:make-decoder) :type clgrpc.hpack:decoder)
  ;; ---- streams
  (streams (make-hash-table :test 'eql :size 8) :type hash-table)
  (active-local 0 :type fixnum)         ; open streams we initiated
  (active-remote 0 :type fixnum)        ; open streams the peer initiated
  ;; Peer streams whose application work has not finished, even if the
  ;; stream itself was reset (Rapid Reset: resets must not free handler
  ;; slots): CLAIM-HANDLER-SLOT and RELEASE-HANDLER-SLOT.
  (handlers 0 :type fixnum)
  (next-stream-id 1 :type fixnum)       ; for streams we initiate
  (max-remote-id 0 :type fixnum)        ; highest stream id the peer opened
  (recent-ids (make-array +recent-closed-count+ :element-type 'fixnum :initial-element 0)
   :type (simple-array fixnum (*)))
  (recent-how (make-array +recent-closed-count+ :initial-element nil) :type simple-vector)
  (recent-next 0 :type fixnum)
  ;; Streams we reset, remembered longer (their late frames are ignored,
  ;; 5.4.2): a set and the ring that evicts from it; made on first reset.
  (reset-set nil :type (or null hash-table))
  (reset-ring nil :type (or null (simple-array fixnum (*))))
  (reset-next 0 :type fixnum)
  ;; ---- our settings (what we advertise and enforce)
  (local-max-frame-size +default-max-frame-size+ :type fixnum)
  (local-initial-window 1048576 :type fixnum)
  (local-max-concurrent nil :type (or null fixnum))
  (local-max-header-list-size 65536 :type fixnum)
  (local-connection-window 4194304 :type fixnum)
  (local-settings-acked nil)
  ;; ---- the peer's settings (what we obey); protocol defaults until its SETTINGS
  (peer-settings-seen nil)
  (peer-max-frame-size +default-max-frame-size+ :type fixnum)
  (peer-initial-window +default-window-size+ :type fixnum)
  (peer-max-concurrent nil :type (or null fixnum))
  (peer-max-header-list-size nil)
  ;; ---- connection flow control (6.9)
  (send-window +default-window-size+ :type fixnum)
  ;; What SETTINGS_INITIAL_WINDOW_SIZE changes have added to every stream's
  ;; send window (H2-STREAM-SEND-WINDOW); a bound on the largest stored
  ;; stream window, and the streams whose senders wait for window.
  (send-window-shift 0 :type fixnum)
  (send-window-high 0 :type fixnum)
  (window-waiting '() :type list)
  (recv-window +default-window-size+ :type fixnum)
  (recv-unacked 0 :type fixnum)
  ;; ---- CONTINUATION assembly (6.10); the buffer exists only during one
  (cont-active nil)
  (cont-stream-id 0 :type fixnum)
  (cont-end-stream nil)
  (cont-pending-error nil)
  (cont-buf nil :type (or null obuf))
  (cont-held 0 :type fixnum)            ; of CONT-BUF, charged to the budget
  ;; ---- limits, keepalive and flood accounting (times in microseconds)
  (limits *default-limits* :type connection-limits)
  ;; What the application holds for this connection's streams, against a
  ;; MEMORY-BUDGET shared with other connections (budget.lisp), or NIL for
  ;; no budget.
  (budget nil)
  (budget-held 0 :type fixnum)
  (senders-over-budget 0 :type fixnum)  ; CLAIM-SENDER-OVER-BUDGET
  (created-us 0 :type fixnum)
  (last-read-us 0 :type fixnum)
  (idle-since-us 0 :type fixnum)        ; when the last stream closed
  (keepalive-ping-us nil :type (or null fixnum)) ; our keepalive PING in flight since
  (last-ping-us nil :type (or null fixnum))      ; the peer's last PING
  (ping-strikes 0 :type fixnum)
  (reset-ping-strikes nil)              ; we sent HEADERS or DATA since the last PING
  (age-goaway-us nil :type (or null fixnum))     ; when MAX-AGE's GOAWAY went out
  (resets-window-us 0 :type fixnum)
  (resets-in-window 0 :type fixnum)
  ;; ---- lifecycle
  (goaway-sent nil)
  (goaway-received nil)
  ;; The peer's GOAWAY: (error-code . debug data as a string).
  (peer-goaway nil :type list)
  (peer-last-stream-id +max-window-size+ :type fixnum) ; from the peer's GOAWAY
  (closed nil)
  (close-code nil)                      ; error code we or the peer closed with
  (close-reason nil :type (or null string)) ; why, when a failed TLS session closed it
  (ping-acks 0 :type fixnum)            ; PING ACKs received, for CONNECTION-PING
  ;; ---- application callbacks (all called with LOCK held, on the reactor
  ;; unless noted)
  ;; (conn stream headers end-stream): a header block on STREAM; on a server
  ;; a stream whose USER is NIL is a new request.
  (on-headers nil :type (or null function))
  ;; (conn stream octets start end end-stream): DATA payload OCTETS[START,END),
  ;; valid only during the call.
  (on-data nil :type (or null function))
  ;; (conn stream error-code origin): the stream ended abnormally.  ORIGIN is
  ;; :PEER (RST_STREAM received), :LOCAL (a stream error we detected and
  ;; answered with RST_STREAM), :GOAWAY (not processed by the peer) or
  ;; :CONNECTION (connection closed; any thread).
  (on-reset nil :type (or null function))
  ;; (conn function argument): work handed off (HAND-OFF) will never run,
  ;; as the executor is shut down (reactor thread, lock held).
  (on-abandon nil :type (or null function))
  ;; (conn): the connection closed (reactor thread, lock not held).
  (on-close nil :type (or null function))
  (user nil)
  ;; The application's own per-connection state (the gRPC server's handler
  ;; admission, server.lisp).
  (app nil))

(defun make-connection (socket role &key on-headers on-data on-reset on-abandon on-close
                                      user executor
                                      (send-stall-timeout 120)
                                      (max-concurrent-streams (if (eq role :server) 1000 nil))
                                      (initial-window-size 1048576)
                                      (connection-window-size 4194304)
                                      (max-frame-size +default-max-frame-size+)
                                      (max-header-list-size 65536)
                                      (limits *default-limits*)
                                      budget
                                      tls)
  "A connection over the connected SOCKET as ROLE (:CLIENT or :SERVER).
Nothing is sent or read until CONNECTION-START.  LIMITS (a
CONNECTION-LIMITS) bounds what the peer may do, and BUDGET (a
MEMORY-BUDGET, or NIL for none) what the application may hold for its
streams.  EXECUTOR (clgrpc.util) runs
the work the callbacks hand off (HAND-OFF); ON-ABANDON hears of work it
refused.  SEND-STALL-TIMEOUT is how many
seconds a sender waits for window or for the output to drain, with no
progress, before its stream is reset.  TLS, a clgrpc.tls session
of ROLE, makes it HTTP/2 over TLS: the handshake comes first, and frames go
out once it is complete."
  (check-type role (member :client :server))
  (validate-setting +settings-initial-window-size+ initial-window-size)
  (validate-setting +settings-max-frame-size+ max-frame-size)
  (when tls
    (assert (eq (clgrpc.tls:tls-session-role tls) role) () "a ~(~A~) TLS session for a ~(~A~) connection"
            (clgrpc.tls:tls-session-role tls) role))
  (%make-connection :role role :socket socket :tls tls
                    :decoder (clgrpc.hpack:make-decoder :max-list-size max-header-list-size)
                    :fd (if socket (clgrpc.net:socket-fd socket) -1)
                    :next-stream-id (if (eq role :client) 1 2)
                    :on-headers on-headers :on-data on-data :on-reset on-reset
                    :on-abandon on-abandon :on-close on-close :user user :limits limits :executor executor
                    :budget budget
                    :send-stall-timeout (round (* send-stall-timeout 1000000))
                    :local-max-concurrent max-concurrent-streams
                    :local-initial-window initial-window-size
                    :local-connection-window (max connection-window-size +default-window-size+)
                    :local-max-frame-size max-frame-size
                    :local-max-header-list-size max-header-list-size))

(defmacro with-connection-lock ((conn) &body body)
  ;; Held briefly and never across a wait: a worker waiting for it waits
  ;; on the thread that holds it, and does not grow the pool.
  `(clgrpc.util:with-worker-mutex ((conn-lock ,conn))
     ,@body))

;;; Public readers under the names the package exports.
(defun connection-role (conn) (conn-role conn))
(defun connection-user (conn) (conn-user conn))
(defun (setf connection-user) (value conn) (setf (conn-user conn) value))
(defun connection-app (conn) (conn-app conn))
(defun (setf connection-app) (value conn) (setf (conn-app conn) value))
(defun connection-lock (conn) (conn-lock conn))
(defun connection-closed-p (conn) (conn-closed conn))
(defun connection-goaway-received-p (conn) (conn-goaway-received conn))
(defun connection-peer-settings-seen-p (conn)
  "Whether the peer's first SETTINGS arrived: an HTTP/2 peer is there."
  (conn-peer-settings-seen conn))
(defun connection-peer-goaway (conn)
  "The peer's GOAWAY: (values error-code debug-string), or NIL."
  (let ((goaway (conn-peer-goaway conn)))
    (values (car goaway) (cdr goaway))))
(defun connection-goaway-sent-p (conn) (conn-goaway-sent conn))
(defun connection-stream-count (conn) (hash-table-count (conn-streams conn)))
(defun connection-peer-max-concurrent-streams (conn) (conn-peer-max-concurrent conn))
(defun connection-peer-max-frame-size (conn) (conn-peer-max-frame-size conn))
(defun connection-peer-max-header-list-size (conn) (conn-peer-max-header-list-size conn))
(defun connection-send-window (conn) (conn-send-window conn))
(defun connection-finished-p (conn) (conn-finished conn))
(defun connection-tls (conn) (conn-tls conn))
(defun connection-close-reason (conn) (conn-close-reason conn))
(defun connection-handler-count (conn) (conn-handlers conn))
(defun connection-receive-stall-timeout (conn)
  "Microseconds, or NIL (CONNECTION-LIMITS)."
  (limits-receive-stall-timeout (conn-limits conn)))
(defun connection-lane (conn)
  "The executor lane of CONN's reactor: where work for CONN is submitted."
  (conn-lane conn))

;; Lock held.
(defun %encoder (conn)
  "CONN's HPACK encoder, made on first use."
  (or (conn-encoder conn)
      (let ((encoder (clgrpc.hpack:make-encoder)))
        (clgrpc.hpack:encoder-set-max-table-size encoder (conn-peer-header-table-min conn))
        (clgrpc.hpack:encoder-set-max-table-size encoder (conn-peer-header-table-size conn))
        (setf (conn-encoder conn) encoder))))

(defun defer-to-reader (conn function argument)
  "Reactor thread, lock held: call (FUNCTION ARGUMENT) on this thread once it
has processed the frames of this turn and released the lock, before it
writes what they produced.  For work that never blocks and takes
microseconds: the reactor serves no other connection meanwhile."
  (push argument (conn-deferred conn))
  (push function (conn-deferred conn))
  nil)

(defun hand-off (conn function argument &key responds)
  "Reactor thread, lock held: run (FUNCTION ARGUMENT) on CONN's executor.
Everything one turn of the reactor hands off goes to the executor in one
batch, in order, once the turn's frames are processed.  RESPONDS: the work
writes to CONN as soon as it has run (a complete request's handler), so the
turn's replies may wait for it (reactor-turn.lisp)."
  (push function (conn-handoff conn))
  (push argument (conn-handoff conn))
  (when responds
    (setf (conn-handoff-responds conn) t))
  nil)

;;; ------------------------------------------------------------------
;;; Stream identifiers (5.1.1)

(declaim (inline peer-initiated-p))
(defun peer-initiated-p (conn id)
  "Clients open odd streams, servers even ones."
  (declare (type fixnum id))
  (if (eq (conn-role conn) :server) (oddp id) (evenp id)))

(defun %stream-idle-p (conn id)
  "True if stream ID was never opened: above every identifier the peer (for
its streams) or we (for ours) have used."
  (declare (type fixnum id))
  (if (peer-initiated-p conn id)
      (> id (conn-max-remote-id conn))
      (>= id (conn-next-stream-id conn))))

(defconstant +reset-memory+ 1024
  "How many streams we reset are remembered, to ignore the frames the peer
sent before it saw our RST_STREAM instead of taking them for protocol
errors.")

(defun %remember-reset (conn id)
  (unless (conn-reset-set conn)
    (setf (conn-reset-set conn) (make-hash-table :test 'eql)
          (conn-reset-ring conn) (make-array +reset-memory+ :element-type 'fixnum
                                                            :initial-element 0)))
  (let ((set (conn-reset-set conn))
        (ring (conn-reset-ring conn))
        (i (conn-reset-next conn)))
    (declare (type (simple-array fixnum (*)) ring))
    (remhash (aref ring i) set)
    (setf (aref ring i) id
          (gethash id set) t
          (conn-reset-next conn) (if (= (1+ i) +reset-memory+) 0 (1+ i)))))

(defun %reset-sent-p (conn id)
  "True if we reset stream ID (among the last +RESET-MEMORY+ we reset)."
  (let ((set (conn-reset-set conn)))
    (and set (gethash id set))))

(defun %remember-closed (conn id how)
  (when (eq how :reset-sent)
    (%remember-reset conn id))
  (let ((i (conn-recent-next conn)))
    (setf (aref (conn-recent-ids conn) i) id
          (svref (conn-recent-how conn) i) how
          (conn-recent-next conn) (if (= (1+ i) +recent-closed-count+) 0 (1+ i)))))

(defun %recently-closed (conn id)
  "How stream ID was closed (:RESET-SENT, :RESET-RECEIVED or :ENDED) if it
is among the last streams closed, else NIL."
  (let ((ids (conn-recent-ids conn)))
    (dotimes (i +recent-closed-count+ nil)
      (when (= (aref ids i) id)
        (return (svref (conn-recent-how conn) i))))))

(declaim (inline %wake-stream-senders))
(defun %wake-stream-senders (stream)
  "Lock held: wake the senders waiting for STREAM's window."
  (let ((cv (h2-stream-send-cv stream)))
    (when cv
      (clgrpc.util:broadcast-if-waiting (h2-stream-send-waiters stream) cv))))

(declaim (inline stream-send-window))
(defun stream-send-window (conn stream)
  "Octets of DATA the peer's window for STREAM allows (lock held; may be
negative)."
  (+ (h2-stream-send-window stream) (conn-send-window-shift conn)))

(defun %new-stream (conn id state user)
  "A stream with the windows a new one starts with."
  (make-h2-stream id state (- (conn-peer-initial-window conn) (conn-send-window-shift conn))
                  (conn-local-initial-window conn) user))

(defun %grow-stream-window (conn stream increment)
  "Lock held: the peer's WINDOW_UPDATE for STREAM.  True unless the window
would pass 2^31-1."
  (declare (type fixnum increment))
  (let ((stored (+ (h2-stream-send-window stream) increment)))
    (when (<= (+ stored (conn-send-window-shift conn)) +max-window-size+)
      (setf (h2-stream-send-window stream) stored
            (conn-send-window-high conn) (max stored (conn-send-window-high conn)))
      (%wake-stream-senders stream)
      t)))

(defun %shift-stream-windows (conn delta)
  "Lock held: SETTINGS_INITIAL_WINDOW_SIZE changed by DELTA, which changes
every stream's window (6.9.2).  True unless one would pass 2^31-1.  The
stored windows stay; only the shift moves, and only senders that wait for
window are woken.  The bound on the stored windows is made exact before
an overflow is declared."
  (declare (type fixnum delta))
  (let ((shift (+ (conn-send-window-shift conn) delta)))
    (when (and (> (+ (conn-send-window-high conn) shift) +max-window-size+)
               (plusp (hash-table-count (conn-streams conn))))
      (setf (conn-send-window-high conn)
            (loop for s being the hash-values of (conn-streams conn)
                  maximize (h2-stream-send-window s))))
    (when (or (zerop (hash-table-count (conn-streams conn)))
              (<= (+ (conn-send-window-high conn) shift) +max-window-size+))
      (setf (conn-send-window-shift conn) shift)
      (when (plusp delta)
        (dolist (s (shiftf (conn-window-waiting conn) '()))
          (setf (h2-stream-window-waiting s) nil)
          (%wake-stream-senders s)))
      t)))

(defun %wait-for-stream-window (conn stream)
  "Lock held: a sender is about to wait for STREAM's window: list it, so a
larger initial window wakes it."
  (unless (h2-stream-window-waiting stream)
    (setf (h2-stream-window-waiting stream) t)
    (push stream (conn-window-waiting conn))))

(defun %close-stream (conn stream how)
  "Move STREAM to closed and forget it; wakes anyone waiting on its window
or for a free stream slot."
  (declare (type h2-stream stream))
  (unless (eq (h2-stream-state stream) :closed)
    (setf (h2-stream-state stream) :closed)
    (let ((id (h2-stream-id stream)))
      (when (plusp id)
        (when (remhash id (conn-streams conn))
          (if (peer-initiated-p conn id)
              (decf (conn-active-remote conn))
              (decf (conn-active-local conn))))
        (%remember-closed conn id how)))
    ;; A response parked for it will never be sent: drop it now, not when
    ;; the output next drains, which a peer that does not read may put off
    ;; for ever while it resets more.
    (when (h2-stream-parked stream)
      (setf (h2-stream-parked stream) nil
            (h2-stream-parked-then stream) nil
            (h2-stream-parked-charge stream) 0
            (conn-parked conn) (delete stream (conn-parked conn) :test #'eq)))
    ;; What the stream holds goes back now, or when its handler is over:
    ;; a request stays charged while its handler runs.
    (unless (h2-stream-holds-slot stream)
      (stream-discharge-all conn stream))
    (when (zerop (hash-table-count (conn-streams conn)))
      (setf (conn-idle-since-us conn) (clgrpc.util:now-us))
      (when (or (conn-goaway-received conn) (conn-goaway-sent conn))
        ;; After GOAWAY the connection ends with its last stream: the
        ;; reactor flushes and closes it.
        (%post conn +post-drain-close+)))
    (when (h2-stream-window-waiting stream)
      (setf (h2-stream-window-waiting stream) nil
            (conn-window-waiting conn) (delete stream (conn-window-waiting conn) :test #'eq)))
    (%wake-stream-senders stream)
    ;; Its sender may be waiting for the connection's window instead.
    (clgrpc.util:broadcast-if-waiting (conn-send-waiters conn) (conn-send-cv conn))
    (clgrpc.util:broadcast-if-waiting (conn-window-waiters conn) (conn-window-cv conn))
    (clgrpc.util:broadcast-if-waiting (conn-drain-waiters conn) (conn-drain-cv conn))))

(defun %stream-end-remote (conn stream)
  "The peer sent END_STREAM."
  (ecase (h2-stream-state stream)
    (:open (setf (h2-stream-state stream) :half-closed-remote))
    (:half-closed-local (%close-stream conn stream :ended))))

(defun %stream-end-local (conn stream)
  "We sent END_STREAM."
  (ecase (h2-stream-state stream)
    (:open (setf (h2-stream-state stream) :half-closed-local))
    (:half-closed-remote (%close-stream conn stream :ended))))

;;; Defined in later files; declared so that this file compiles without
;;; undefined-function warnings.
(declaim (ftype function connection-close request-flush %post reader-thread-p))

;;; Handler slots (Rapid Reset): the application counts the work it starts
;;; for a peer stream, and a stream the peer resets keeps its slot until
;;; that work is over.

(defun claim-handler-slot (conn stream)
  "Lock held: the application starts work for the peer's STREAM, which
holds one of CONN's handler slots until RELEASE-HANDLER-SLOT, even once the
stream is reset.  Streams are refused (REFUSED_STREAM) while every slot is
taken (SETTINGS_MAX_CONCURRENT_STREAMS of them)."
  (unless (h2-stream-holds-slot stream)
    (setf (h2-stream-holds-slot stream) t)
    (%count-call conn 1)
    (incf (conn-handlers conn))))

(defun release-handler-slot (conn stream)
  "Lock held: STREAM's work is over (or will never run): its slot goes back,
once."
  (when (h2-stream-holds-slot stream)
    (setf (h2-stream-holds-slot stream) nil)
    (%count-call conn -1)
    (decf (conn-handlers conn))
    (when (eq (h2-stream-state stream) :closed)
      (stream-discharge-all conn stream))))
