;;;; Reactors: the threads that read every connection of the process.
;;;;
;;;; A reactor is one thread around one epoll set.  There is one per core
;;;; (*REACTOR-COUNT*), created on first use and shared by servers and
;;;; clients; a new connection goes to the next one in turn.  Per event the
;;;; reactor gives the connection one *turn*: it reads once (level-triggered,
;;;; so every ready connection gets a turn before a busy one is read again),
;;;; processes the complete frames in place, hands the work they produced
;;;; off (a server's handlers: they go to its executor in one batch with
;;;; the rest of the epoll round's, before the reactor waits again), runs
;;;; the little work they deferred to it (waking receivers, and the handlers
;;;; an application declared inline), and writes the replies without
;;;; blocking.  When the turn's work all went to handlers that answer at
;;;; once and its replies are a few ACKs or WINDOW_UPDATEs, they wait up to
;;;; +HOLD-REPLIES-US+ (checked between turns) for a handler's response,
;;;; which carries them in the same send(2).
;;;;
;;;; Budgets.  A turn processes at most +TURN-FRAMES+ frames and
;;;; +TURN-OCTETS+ octets of input; the rest stays in the connection's CARRY,
;;;; and the connection goes on the reactor's BACKLOG, which gets a turn per
;;;; loop before epoll is asked again (and is not read meanwhile).  A thread
;;;; writes at most +TURN-WRITE-OCTETS+ in one go (output.lisp).  So no
;;;; connection holds its reactor for more than a bounded amount of work,
;;;; however much it sends at once.
;;;;
;;;; Buffers.  All connections of a reactor read into the reactor's one
;;;; large buffer; a partial frame left at its end is copied into the
;;;; connection's CARRY, which exists only while such a fragment does.  An
;;;; idle connection therefore holds no read buffer, and its output buffers
;;;; are small until it sends (output.lisp).
;;;;
;;;; Ownership.  Only the reactor thread touches its table (descriptor to
;;;; connection), adds descriptors to or removes them from its epoll set, and
;;;; closes a connection's socket.  Other threads ask it to, through
;;;; %POST: the connection is queued with a bit saying what it needs, and an
;;;; eventfd wakes the reactor.  Lock order: a connection's lock, then the
;;;; reactor's; the reactor never takes a connection's lock while holding its
;;;; own.
;;;;
;;;; Timers.  Every +SWEEP-INTERVAL-US+ the reactor looks at each of its
;;;; connections for the deadlines of CONNECTION-LIMITS: the handshake,
;;;; keepalive pings and their ACKs, idle and age limits, and the linger
;;;; after a GOAWAY.  At 10,000 connections that is a few hundred
;;;; microseconds per sweep.

(in-package #:clgrpc.http2)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +sweep-interval-us+ 200000)
(defconstant +linger-us+ 1000000
  "How long a connection that sent GOAWAY for an error keeps reading (and
dropping) input so that the peer can read the GOAWAY.")
(defconstant +drain-close-us+ 5000000
  "How long a connection closing gracefully may take to write what it has
buffered to a peer that reads slowly.")
(defconstant +post-register+ 8)         ; add the connection to the epoll set
(defconstant +post-handshake+ 16)       ; a TLS handshake step ended (tls-io.lisp)
(defconstant +turn-frames+ 256
  "Frames one turn of a connection processes at most.")
(defconstant +turn-octets+ (* 256 1024)
  "Input octets one turn of a connection processes at most.")
(defconstant +hold-replies-us+ 1000
  "How long the replies of a turn that handed off a handler (a PING ACK, a
WINDOW_UPDATE) may wait for that handler's response to carry them.")
(defconstant +hold-max-octets+ 64
  "Output a turn may hold: a few ACKs and WINDOW_UPDATEs (a PING ACK is 17
octets), not responses.")
(defconstant +client-tls-handshake-timeout-us+ 20000000
  "How long a client waits for a server to complete the TLS handshake:
grpc-go's minimum connect timeout, which covers its handshake too.")

(defstruct (reactor (:constructor %make-reactor))
  (epfd -1 :type fixnum)
  (wakefd -1 :type fixnum)
  (thread nil)
  (lock (sb-thread:make-mutex :name "reactor") :type sb-thread:mutex)
  (posted '() :type list)               ; connections with CONN-POSTED bits
  (wake-pending nil)                    ; an eventfd signal is outstanding
  ;; Between two epoll waits (set without the lock when a wait returns,
  ;; cleared under it before the next): work posted now runs in this turn's
  ;; RUN-POSTED with no wake-up (%LEAVE-FLUSH-TO-REACTOR).
  (in-turn nil)
  (table (make-hash-table :test 'eql) :type hash-table) ; fd -> connection
  (buffer (make-octets (+ +read-buffer-size+ 64)) :type octets)
  ;; Ciphertext read from TLS connections, before it is decrypted into
  ;; BUFFER; made when the first one is read.
  (cipher nil :type (or null octets))
  (events (clgrpc.net:make-epoll-events 256))
  (next-sweep-us 0 :type fixnum)
  (index 0 :type fixnum)                ; its place in *REACTORS*
  ;; Connections whose input left over from a turn over budget waits in
  ;; their carry: each gets a turn per loop (only the reactor touches it).
  (backlog '() :type list)
  ;; (connection . tasks) its turns handed off since it last waited in
  ;; epoll, newest first (SUBMIT-HANDOFFS).
  (handoffs '() :type list)
  ;; Connections whose replies wait for a handler's response, in the order
  ;; they began to (%HOLD-REPLIES): so also in the order they are due.
  (held (clgrpc.util:make-fifo 16) :type clgrpc.util:fifo))

(defvar *reactor-thread-wrapper* nil
  "NIL or a function of a thunk that each reactor thread runs its loop
through (and must call): where a layer above binds per-thread specials for
the work a reactor runs inline, such as an encoding scratch buffer.")

(defparameter *reactor-count* nil
  "How many reactors to start: NIL for one per CPU this process may use.")

(defun reactor-count ()
  "How many reactors run, or will once the first connection starts them."
  (or *reactor-count* (clgrpc.util:usable-cpu-count)))

(defvar *reactors* #())
(defvar *reactors-lock* (sb-thread:make-mutex :name "reactors"))
(defvar *next-reactor* 0)
(declaim (type simple-vector *reactors*) (type fixnum *next-reactor*))

(defvar *serving* nil
  "On a reactor thread, the connection it serves now: reads, processes, runs
the work its frames deferred, and writes the replies of.")

(declaim (ftype function %write-replies run-deferred))

(defmacro serving ((conn) &body body)
  "Reactor thread: run BODY as the thread serving CONN, for which
READER-THREAD-P is then true; then hand off and run what BODY left for
the end of the turn, and write the replies BODY queued for it."
  `(let ((*serving* ,conn))
     (multiple-value-prog1 (progn ,@body)
       (with-connection-guard (,conn)
         (run-deferred ,conn)
         (%write-replies ,conn)))))

(defun reader-thread-p (conn)
  "True on the reactor thread that reads CONN while it serves CONN: code
that must never block, and whose output on CONN that thread writes once the
frames and work at hand are done (REQUEST-FLUSH).  False for CONN on that
thread while it serves another connection (an inline handler calling out
through another channel)."
  (let ((reactor (conn-reactor conn)))
    (and reactor (eq conn *serving*) (eq sb-thread:*current-thread* (reactor-thread reactor)))))

(declaim (ftype function connection-fail finish-connection %mark-closed))

(defmacro with-connection-guard ((conn) &body body)
  "Run BODY for CONN on a reactor: a connection error becomes GOAWAY and
close; anything else unexpected is logged and costs this connection only,
never the reactor (which serves every other connection)."
  `(handler-case (progn ,@body)
     (http2-error (e)
       (guarded-fail ,conn (http2-error-code e) (http2-error-message e)))
     (serious-condition (e)
       (log-unexpected ,conn e)
       (guarded-fail ,conn +internal-error+ "internal error"))))

(defun log-unexpected (conn e)
  (clgrpc.util:log-line "connection on fd ~D failed: ~A" (conn-fd conn) e))

(defun guarded-fail (conn code message)
  "Fail CONN with CODE; if even that fails, just release it."
  (handler-case (if (conn-linger-until conn)
                    (finish-connection conn code)
                    (connection-fail conn code message))
    (serious-condition (e)
      (log-unexpected conn e)
      (ignore-errors (finish-connection conn code)))))

(declaim (ftype function reactor-main))

(defun start-reactor (index)
  (let ((reactor (%make-reactor :epfd (clgrpc.net:epoll-create)
                                :wakefd (clgrpc.net:eventfd-create)
                                :index index)))
    (clgrpc.net:epoll-control (reactor-epfd reactor) :add (reactor-wakefd reactor)
                              clgrpc.net:+epollin+)
    ;; The thread starts its loop once it holds the lock (REACTOR-MAIN),
    ;; so it is the reactor's thread by then.
    (sb-thread:with-mutex ((reactor-lock reactor))
      (setf (reactor-thread reactor)
            (sb-thread:make-thread #'reactor-main :name "h2 reactor" :arguments (list reactor))))
    reactor))

(defun pick-reactor ()
  "The reactor for a new connection, starting them on first use."
  (sb-thread:with-mutex (*reactors-lock*)
    (when (zerop (length *reactors*))
      (setf *reactors* (coerce (loop for i below (reactor-count)
                                     collect (start-reactor i))
                               'simple-vector))
      ;; Reactors log, and must not be the ones to start the log's thread.
      (clgrpc.util:ensure-log-thread))
    (let ((i *next-reactor*))
      (setf *next-reactor* (mod (1+ i) (length *reactors*)))
      (svref *reactors* i))))

(defun %post (conn bit)
  "Connection lock held, any thread: ask CONN's reactor for work BIT."
  (declare (type fixnum bit))
  (let ((reactor (conn-reactor conn))
        (old (conn-posted conn)))
    (when (and reactor (not (conn-finished conn)))
      (setf (conn-posted conn) (logior old bit))
      (when (zerop old)
        (sb-thread:with-mutex ((reactor-lock reactor))
          (push conn (reactor-posted reactor))
          (unless (or (reactor-wake-pending reactor)
                      (eq sb-thread:*current-thread* (reactor-thread reactor)))
            (setf (reactor-wake-pending reactor) t)
            (clgrpc.net:eventfd-signal (reactor-wakefd reactor))))))
    nil))

(defconstant +leave-to-reactor-octets+ (* 64 1024)
  "Output buffered beyond this is written by the thread that appended it,
not left to the reactor: a round's delay would hold it against the
connection's high-water mark.")

(defun %leave-flush-to-reactor (conn)
  "Connection lock held, a thread other than the reactor serving CONN: if
that reactor is in a turn, and little is buffered, post CONN's output to
it and return true.  The reactor runs posted work between connections'
turns and before it waits again, so responses that handler threads finish
while it reads go out with it in one send(2) instead of one each.  A
waiting reactor is not woken for it (that would cost a wake-up per
response where they come one at a time): the thread writes itself."
  (let ((reactor (conn-reactor conn)))
    ;; A look without the lock first: a stale NIL only means this thread
    ;; writes, and a stale T is looked at again under it.
    (when (and reactor (reactor-in-turn reactor) (not (conn-finished conn))
               (<= (the fixnum (%buffered conn)) +leave-to-reactor-octets+))
      (clgrpc.util:with-worker-mutex ((reactor-lock reactor))
        ;; Under the lock that clears it: a post seen in a turn is seen by
        ;; the reactor before it waits (REACTOR-LOOP).
        (when (reactor-in-turn reactor)
          (let ((old (conn-posted conn)))
            (declare (type fixnum old))
            (setf (conn-posted conn) (logior old +post-flush+))
            ;; Posted already: listed, or its bits not yet taken.
            (when (zerop old)
              (push conn (reactor-posted reactor)))
            t))))))

(defun %interest (conn)
  (logior (if (or (conn-read-paused conn) (conn-handshake-running conn)) 0 clgrpc.net:+epollin+)
          (if (conn-write-blocked conn) clgrpc.net:+epollout+ 0)))

(defun %update-interest (conn)
  "Lock held: tell epoll what the reactor waits for on CONN: input unless
reading is paused (output.lisp), and output while the connection is
write-blocked."
  (when (conn-registered conn)
    (clgrpc.net:epoll-control (reactor-epfd (conn-reactor conn)) :modify (conn-fd conn)
                              (%interest conn))))

;;; ------------------------------------------------------------------
;;; Closing

(defun %await-flush (conn)
  "Lock held: wait for a flush in progress on another thread to return (it
never blocks, so this is short)."
  (loop while (conn-flushing conn)
        do (clgrpc.util:counted-wait ((conn-drain-waiters conn))
             (clgrpc.util:wait-on (conn-drain-cv conn) (conn-lock conn)
                                  (+ (clgrpc.util:now-us) 100000)))))

(defun finish-connection (conn code)
  "Reactor thread: release CONN's socket and fail what is left.  CODE is
NIL for a clean end (end of file, or GOAWAY and no streams left)."
  (when (conn-finished conn)
    (return-from finish-connection nil))
  (unless code
    ;; What is buffered, such as a last response, still goes out if the
    ;; socket takes it now.
    (%write-out conn nil))
  (let ((reactor (conn-reactor conn)))
    (with-connection-lock (conn)
      (%mark-closed conn code)
      (when (conn-registered conn)
        (clgrpc.net:epoll-control (reactor-epfd reactor) :delete (conn-fd conn) 0)
        (remhash (conn-fd conn) (reactor-table reactor))
        (setf (conn-registered conn) nil))
      ;; A flush that started before the close must return before the
      ;; descriptor is closed.
      (%await-flush conn)
      ;; A clean end over TLS says so (close_notify, if the socket takes
      ;; it now), which also keeps the session resumable.
      (when (and (null code) (conn-tls conn) (>= (conn-fd conn) 0))
        (clgrpc.tls:session-close-notify (conn-tls conn) (conn-fd conn)))
      ;; Under the lock, so no thread writes to a descriptor number the
      ;; kernel may already have given to another socket.
      (when (>= (conn-fd conn) 0)
        (clgrpc.net:fd-shutdown (conn-fd conn) :both))
      (setf (conn-fd conn) -1
            (conn-carry conn) nil
            (conn-carry-start conn) 0
            (conn-carry-fill conn) 0
            (conn-input-pending conn) nil
            (conn-parked conn) '())
      (clgrpc.net:socket-close (conn-socket conn))
      ;; A handshake step under way frees the session when it ends: the
      ;; reactor must not wait for its lock meanwhile.
      (when (and (conn-tls conn) (not (conn-handshake-running conn)))
        (clgrpc.tls:session-free (conn-tls conn))))
    (when (conn-on-close conn)
      (funcall (the function (conn-on-close conn)) conn))
    (with-connection-lock (conn)
      (setf (conn-finished conn) t)
      (sb-thread:condition-broadcast (conn-window-cv conn))
      (sb-thread:condition-broadcast (conn-drain-cv conn)))))

(defun %output-pending-p (conn)
  "Lock held: output is buffered, parked or being written.  Frames of a TLS
connection still in its handshake do not count: none can go, and a close
that waited for them would wait for a peer that may never finish it."
  (or (conn-flushing conn) (conn-write-blocked conn)
      (and (not (%tls-handshaking-p conn))
           (or (conn-parked conn) (plusp (%buffered conn))))))

(defun %begin-linger (conn until)
  "Reactor thread: from now on only drop input, and finish at UNTIL or at
end of file; half-close our side once our output is written."
  (setf (conn-linger-until conn) until)
  (unless (or (with-connection-lock (conn) (%output-pending-p conn)) (< (conn-fd conn) 0))
    (clgrpc.net:fd-shutdown (conn-fd conn) :output)))

(defun connection-fail (conn code message)
  "Reactor thread, a connection error: GOAWAY with CODE and the last stream
we processed, then linger so the peer reads it before the close."
  (with-connection-lock (conn)
    (unless (or (conn-closed conn) (conn-linger-until conn))
      (write-goaway-frame (conn-out conn) (conn-max-remote-id conn) code
                          (and message (latin1-to-octets
                                        (remove-if (lambda (c) (> (char-code c) 255))
                                                   (subseq message 0 (min 200 (length message)))))))
      (setf (conn-goaway-sent conn) t
            (conn-close-code conn) code)))
  (%write-out conn nil)
  (%begin-linger conn (+ (clgrpc.util:now-us) +linger-us+)))

(defun drain-and-close (conn)
  "Reactor thread: a graceful end (GOAWAY and no streams left): write
everything buffered, then close.  A flush another thread has under way is
let finish first, so its unsent rest is not dropped; a peer slow to read
gets +DRAIN-CLOSE-US+ to take the rest."
  (with-connection-lock (conn)
    (%await-flush conn))
  (%write-out conn nil)
  (if (with-connection-lock (conn) (%output-pending-p conn))
      (unless (conn-linger-until conn)
        (%begin-linger conn (+ (clgrpc.util:now-us) +drain-close-us+)))
      (finish-connection conn nil)))

;;; ------------------------------------------------------------------
;;; Reading: one turn of a connection

(defun %save-carry (conn buf pos fill)
  "Keep BUF[POS,FILL), a partial frame or frames left for want of budget,
for the next turn."
  (declare (type octets buf) (type fixnum pos fill))
  (let ((rest (- fill pos)))
    (if (zerop rest)
        (setf (conn-carry conn) nil (conn-carry-start conn) 0 (conn-carry-fill conn) 0)
        (let ((carry (conn-carry conn)))
          (unless (and carry (>= (length carry) rest))
            (setf carry (make-octets (max rest 1024))
                  (conn-carry conn) carry))
          (replace carry buf :start2 pos :end2 fill)
          (setf (conn-carry-start conn) 0
                (conn-carry-fill conn) rest)))))

(defun %reactor-buffer (reactor conn)
  "The reactor's read buffer, large enough for a partial frame of CONN and
a whole frame behind it."
  (let ((need (* 2 (+ 9 (conn-local-max-frame-size conn))))
        (buf (reactor-buffer reactor)))
    (if (>= (length buf) need)
        buf
        (setf (reactor-buffer reactor) (make-octets need)))))

(defun %begin-turn (conn)
  (setf (conn-turn-frames conn) +turn-frames+
        (conn-turn-octets conn) +turn-octets+))

(defun %process-read (conn buf fill)
  "Process the frames in BUF[0,FILL) (a carried rest, then what was just
read) within the turn's budget, and carry what is left to the next turn.
Returns true if whole frames are left for want of budget (INPUT-PENDING)."
  (declare (type octets buf) (type fixnum fill))
  (let ((pos 0))
    (declare (type fixnum pos))
    (when (and (eq (conn-role conn) :server)
               (< (conn-preface-seen conn) (length +connection-preface+)))
      (let ((start (%check-preface conn buf 0 fill)))
        (if start
            (setf pos start)
            (setf pos fill))))
    (multiple-value-bind (next over) (process-input conn buf pos fill)
      (%save-carry conn buf next fill)
      (setf (conn-input-pending conn) over))))

(defun %with-carry (reactor conn)
  "The reactor's buffer for CONN with its carried rest in front:
(values buffer fill)."
  (let ((buf (%reactor-buffer reactor conn))
        (start (conn-carry-start conn))
        (fill (conn-carry-fill conn)))
    (declare (type fixnum start fill))
    (when (> fill start)
      (replace buf (the octets (conn-carry conn)) :start2 start :end2 fill))
    (values buf (- fill start))))

(defun %carry-turn (conn)
  "Reactor: a turn over the whole frames CONN's carry holds, processed
where they are (an earlier turn ran out of budget): each turn moves past
what it processed, and the rest is copied only once it is a partial frame."
  (let ((carry (conn-carry conn))
        (start (conn-carry-start conn))
        (fill (conn-carry-fill conn)))
    (declare (type fixnum start fill))
    (when carry
      (multiple-value-bind (next over) (process-input conn carry start fill)
        (declare (type fixnum next))
        (when (eq carry (conn-carry conn))   ; not released meanwhile
          (cond ((= next fill)
                 (setf (conn-carry conn) nil (conn-carry-start conn) 0 (conn-carry-fill conn) 0))
                (over
                 (setf (conn-carry-start conn) next))
                (t
                 (replace carry carry :start2 next :end2 fill)
                 (setf (conn-carry-start conn) 0 (conn-carry-fill conn) (- fill next))))
          (setf (conn-input-pending conn) over))))))

(defun %read-plain (reactor conn)
  "Read once from CONN's socket and process it.  Returns true if input was
processed, NIL if there was none or the connection ended."
  (multiple-value-bind (buf fill) (%with-carry reactor conn)
    (declare (type octets buf) (type fixnum fill))
    (let ((n (clgrpc.net:fd-recv-some (conn-fd conn) buf fill (length buf))))
      (cond ((eq n :again) (return-from %read-plain nil))
            ((or (null n) (eql n 0))
             (finish-connection conn nil)
             (return-from %read-plain nil)))
      (setf (conn-last-read-us conn) (clgrpc.util:now-us))
      (%process-read conn buf (+ fill (the fixnum n)))
      t)))

(declaim (ftype function %read-tls %tls-backlog-turn))

(defun on-readable (reactor conn)
  (when (conn-linger-until conn)
    ;; Dropping input until the peer has read our GOAWAY.
    (let* ((buf (reactor-buffer reactor))
           (n (clgrpc.net:fd-recv-some (conn-fd conn) buf 0 (length buf))))
      (unless (eq n :again)
        (when (or (null n) (eql n 0))
          (finish-connection conn (conn-close-code conn)))))
    (return-from on-readable nil))
  (when (or (conn-input-pending conn) (conn-handshake-running conn))
    ;; Its turns come from the backlog (or the handshake's end) first; the
    ;; socket waits.
    (return-from on-readable nil))
  (%begin-turn conn)
  (when (if (conn-tls conn) (%read-tls reactor conn) (%read-plain reactor conn))
    (%end-turn reactor conn)))

(defun %backlog-turn (reactor conn)
  "Reactor: a turn over the input CONN had left when its last turn ran out
of budget."
  (when (and (conn-input-pending conn) (conn-registered conn) (not (conn-linger-until conn)))
    (%begin-turn conn)
    (if (conn-tls conn)
        (%tls-backlog-turn reactor conn)
        (%carry-turn conn))
    (%end-turn reactor conn)))

(defun %submit-handoff (conn tasks)
  "Reactor: TASKS (function argument ...), in order, for CONN's executor:
they go with those of every other connection this loop of the reactor
served, in one batch per executor (SUBMIT-HANDOFFS)."
  (let ((reactor (conn-reactor conn)))
    (push (cons conn tasks) (reactor-handoffs reactor))))

(defun submit-handoffs (reactor)
  "Reactor, before it waits in epoll again: the work its turns handed off
since it last waited, to the executors, one batch each (in the order it
came), and so at most one wake-up each.  An executor that is shut down
(its server is stopping) takes nothing: the connections close, and their
calls fail."
  (let ((handoffs (nreverse (shiftf (reactor-handoffs reactor) '()))))
    (loop while handoffs
          do (let* ((executor (conn-executor (car (first handoffs))))
                    (mine (remove executor handoffs :key (lambda (h) (conn-executor (car h)))
                                                    :test-not #'eq))
                    (tasks (loop for (nil . tasks) in mine append tasks)))
               (setf handoffs (delete executor handoffs :key (lambda (h) (conn-executor (car h)))))
               (unless (and executor
                            (clgrpc.util:executor-submit-batch executor (reactor-index reactor) tasks))
                 (dolist (h mine)
                   (%abandon-handoff (car h) (cdr h))))))))

(defun %abandon-handoff (conn tasks)
  "Reactor: CONN's executor refused TASKS (function argument ...), as it
is shut down.  The application hears of each (ON-ABANDON), so that what it
claimed for them (handler slots, which count against the process's calls)
goes back, and the connection closes."
  (unwind-protect
       (with-connection-lock (conn)
         (let ((abandon (conn-on-abandon conn)))
           (when abandon
             (loop for (function argument) on tasks by #'cddr
                   do (handler-case (funcall (the function abandon) conn function argument)
                        (error (e)
                          (clgrpc.util:log-line "abandoning work on fd ~D failed: ~A"
                                                (conn-fd conn) e)))))))
    (connection-close conn :code +refused-stream+)))

(defun run-deferred (conn)
  "Reactor thread serving CONN, lock released: hand the turn's handed-off
work to the executor in one batch, then run the work deferred to this
thread, each in the order it came (and again for what that work handed
off or deferred in turn).  Returns :HANDED-OFF if the turn handed off work
that will answer at once (HAND-OFF's RESPONDS) and ran none here."
  (let ((ran nil))
    (loop while (or (conn-handoff conn) (conn-deferred conn))
          do (let ((handoff (shiftf (conn-handoff conn) '())))
               (when handoff
                 (%submit-handoff conn (nreverse handoff))))
             (let ((tasks (nreverse (shiftf (conn-deferred conn) '()))))
               (when tasks
                 (setf ran t))
               (loop for (argument function) on tasks by #'cddr
                     do (funcall (the function function) argument))))
    (and (shiftf (conn-handoff-responds conn) nil) (not ran) :handed-off)))

(defun %replies-only-p (conn)
  "Whether all CONN has to write is a few replies: no parked response (a
WINDOW_UPDATE asks for a flush to resume those), nothing large."
  (with-connection-lock (conn)
    (and (conn-reader-flush conn)
         (not (conn-write-blocked conn))
         (null (conn-parked conn))
         (<= (%buffered conn) +hold-max-octets+))))

(defun %hold-replies (reactor conn)
  "Reactor: the turn's replies wait, up to +HOLD-REPLIES-US+, for the
response of the handler the turn handed off, whose flush writes them with
it: one send(2) a call, as when handlers ran here, where a PING ACK written
now would cost a second one.  RELEASE-HELD writes them if it has not."
  (setf (conn-reader-flush conn) nil)
  (unless (conn-replies-held-until conn)
    (setf (conn-replies-held-until conn) (+ (clgrpc.util:now-us) +hold-replies-us+))
    (clgrpc.util:fifo-push (reactor-held reactor) conn)))

(defun release-held (reactor)
  "Reactor: write the held replies that have waited their time, oldest
first.  Returns how many microseconds the next one has left, or NIL if
none is held."
  (let ((held (reactor-held reactor))
        (now (clgrpc.util:now-us)))
    (loop
      (when (clgrpc.util:fifo-empty-p held)
        (return nil))
      (let* ((conn (clgrpc.util:fifo-peek held))
             (left (- (the fixnum (conn-replies-held-until conn)) now)))
        (declare (type fixnum left))
        (when (plusp left)
          (return left))
        (clgrpc.util:fifo-pop held)
        (setf (conn-replies-held-until conn) nil)
        (serving (conn)
          (with-connection-guard (conn)
            (%write-out conn nil)
            (%after-write conn)))))))

(defun %end-turn (reactor conn)
  "Reactor: what follows the frames of a turn: the work they produced, the
replies, and the checks that depend on them."
  (when (conn-input-pending conn)
    (push conn (reactor-backlog reactor)))
  ;; Replies to what was just read, and responses of the work above,
  ;; leave before the next connection is served; unless all the work went
  ;; to handlers elsewhere, whose responses will carry them.
  (if (and (eq (run-deferred conn) :handed-off) (%replies-only-p conn))
      (%hold-replies reactor conn)
      (%write-replies conn))
  ;; A peer that asks for more than it reads stops being read.  Only a
  ;; write-blocked connection can be paused: the lock is taken for those
  ;; alone (a stale read of the flag is caught at the next read).
  (when (conn-write-blocked conn)
    (with-connection-lock (conn)
      (%check-read-pause conn)))
  ;; 6.8: after the peer's GOAWAY, the connection ends with its last stream.
  (when (and (conn-goaway-received conn)
             (zerop (hash-table-count (conn-streams conn))))
    (drain-and-close conn)))

(defun %write-replies (conn)
  "Reactor thread serving CONN: write what its frames and deferred work queued."
  (loop repeat 4 while (conn-reader-flush conn) do (%reader-flush conn)))

(defun %after-write (conn)
  "Reactor, after writing CONN's output: a lingering connection whose
output is all written closes (a graceful close) or half-closes."
  (when (and (conn-linger-until conn) (not (conn-finished conn))
             (not (with-connection-lock (conn) (%output-pending-p conn))))
    (if (or (conn-closed conn) (null (conn-close-code conn))
            (eql (conn-close-code conn) +no-error+))
        ;; A graceful close: everything is written.
        (finish-connection conn (conn-close-code conn))
        (clgrpc.net:fd-shutdown (conn-fd conn) :output))))

(defun on-writable (conn)
  (%write-out conn t)
  (%after-write conn))

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
