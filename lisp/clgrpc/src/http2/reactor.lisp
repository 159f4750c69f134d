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
;;;; This file holds the reactors themselves, how other threads ask them for
;;;; work, and how a connection closes.  One turn of a connection is in
;;;; reactor-turn.lisp; the loop around epoll and its timers, in
;;;; reactor-loop.lisp.
;;;;
;;;; Ownership.  Only the reactor thread touches its table (descriptor to
;;;; connection), adds descriptors to or removes them from its epoll set, and
;;;; closes a connection's socket.  Other threads ask it to, through
;;;; %POST: the connection is queued with a bit saying what it needs, and an
;;;; eventfd wakes the reactor.  Lock order: a connection's lock, then the
;;;; reactor's; the reactor never takes a connection's lock while holding its
;;;; own.

(in-package #:clgrpc.http2)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +linger-us+ 1000000
  "How long a connection that sent GOAWAY for an error keeps reading (and
dropping) input so that the peer can read the GOAWAY.")
(defconstant +drain-close-us+ 5000000
  "How long a connection closing gracefully may take to write what it has
buffered to a peer that reads slowly.")
(defconstant +post-register+ 8)         ; add the connection to the epoll set
(defconstant +post-handshake+ 16)       ; a TLS handshake step ended (tls-io.lisp)

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
