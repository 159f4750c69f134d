;;;; Handlers on the reactor, and moving the reactor off one that runs long.
;;;;
;;;; A reactor runs the work that the frames it just read deferred to it
;;;; (%DEFER-TO-READER: a server's unary handlers, server.lisp).  That saves
;;;; handing each call to another thread, which costs a futex wake, a
;;;; context switch and a contended lock per call.  But while the reactor
;;;; runs a handler it serves none of its other connections, and a handler
;;;; may block.
;;;;
;;;; So a watchdog thread looks at every reactor each +TICK-US+ while any of
;;;; them runs such work.  A reactor found inside one and the same handler
;;;; for +SLICE-TICKS+ ticks in a row is handed over: a new thread takes
;;;; over its loop at once, with the work the read deferred behind that
;;;; handler (GIVE-BACK), and the old thread finishes the handler as an
;;;; ordinary thread, then exits.  No handler is interrupted.  A tick across which a garbage collection
;;;; ran does not count, since a collection stops every thread, handlers and
;;;; watchdog alike.
;;;;
;;;; The watchdog sleeps until a reactor enters a handler, and again once
;;;; none has for +IDLE-TICKS+ ticks, so an idle process has no timer
;;;; waking it.  Arming it costs the reactor a memory barrier per handler:
;;;; the reactor stores IN-HANDLER and then reads **WATCHDOG-ARMED**, the
;;;; watchdog stores that and then reads IN-HANDLER, and the barriers on
;;;; both sides make sure at least one of them sees the other's store.
;;;;
;;;; The thread slot of a reactor changes only under its lock, and a handler
;;;; is left under that lock too: so a handler either ends before the
;;;; watchdog looks (and its thread stays the reactor), or the watchdog moves
;;;; the loop first (and the thread, seeing another in its place, retires).

(in-package #:clgrpc.http2)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +tick-us+ 1000 "How often the watchdog looks while armed.")
(defconstant +slice-ticks+ 3
  "Ticks in a row one handler may be seen running before its reactor is
handed over: about 3 ms of one handler.")
(defconstant +idle-ticks+ 200
  "Ticks with no handler run after which the watchdog sleeps until woken.")

(defvar *watchdog-lock* (sb-thread:make-mutex :name "reactor watchdog"))
(defvar *watchdog-cv* (sb-thread:make-waitqueue))
(sb-ext:defglobal **watchdog-armed** nil)
(defvar *watchdog-thread* nil)

(sb-ext:defglobal **handed-over** (list 0)
  "In its car: threads a reactor was handed over from that are still
finishing the handlers they ran (atomic).")
(declaim (type cons **handed-over**))

(defun handed-over-thread-count ()
  "Threads still finishing a handler their reactor was handed over from: a
server runs further handlers elsewhere while there are many."
  (car **handed-over**))

(defun ensure-watchdog ()
  "Start the watchdog thread once (under *REACTORS-LOCK*)."
  (unless *watchdog-thread*
    (setf *watchdog-thread*
          (sb-thread:make-thread #'watchdog-loop :name "h2 reactor watchdog"))))

;;; ------------------------------------------------------------------
;;; The reactor's side

(defun %arm-watchdog ()
  (sb-thread:with-mutex (*watchdog-lock*)
    (unless **watchdog-armed**
      (setf **watchdog-armed** t)
      (sb-thread:condition-notify *watchdog-cv*))))

(declaim (inline %enter-handler))
(defun %enter-handler (reactor)
  ;; The number first: a watchdog that sees the flag must not count the
  ;; previous handler's ticks against this one.
  (setf (reactor-handler-seq reactor)
        (logand (1+ (reactor-handler-seq reactor)) most-positive-fixnum))
  (setf (reactor-in-handler reactor) t)
  (sb-thread:barrier (:memory))
  (unless **watchdog-armed**
    (%arm-watchdog)))

(defun %leave-handler (reactor)
  "True if this thread still runs REACTOR's loop.  A thread the loop was
moved from leaves the flag alone: it is the new thread's now."
  (sb-thread:with-mutex ((reactor-lock reactor))
    (when (eq (reactor-thread reactor) sb-thread:*current-thread*)
      (setf (reactor-in-handler reactor) nil)
      t)))

(defun %retire (conn)
  "The watchdog moved this thread's reactor to another thread while it ran
a handler for CONN (and gave that thread the work deferred behind it):
write what the handler left for the reactor to write, and leave the
reactor's loop, even if that fails."
  (unwind-protect
       (progn
         ;; What ON-READABLE would have done next: after the peer's GOAWAY,
         ;; the connection closes with its last stream.
         (with-connection-lock (conn)
           (when (and (conn-goaway-received conn) (zerop (hash-table-count (conn-streams conn))))
             (%post conn +post-drain-close+)))
         (flush-connection conn))
    (throw '%retired nil)))

(defun give-back (conn tasks)
  "New reactor thread, first thing: TASKS (argument, function, ...), work
the thread it replaced deferred behind the handler it is stuck in on CONN,
go back to CONN's deferred work, ahead of anything deferred since, for this
reactor's loop to run (RUN-POSTED, *RUNNING-GIVEN-BACK*); and what that
read queued for CONN (replies, earlier handlers' responses) is written now,
not once the stuck handler ends."
  (with-connection-lock (conn)
    (when tasks
      (setf (conn-deferred conn) (append (conn-deferred conn) (reverse tasks))))
    (%post conn (if tasks (logior +post-flush+ +post-deferred+) +post-flush+))))

(defun run-until-retired (loop-function)
  "Reactor thread: call LOOP-FUNCTION, which never returns, until the
thread retires (%RETIRE)."
  (catch '%retired
    (funcall (the function loop-function)))
  (sb-ext:atomic-decf (car **handed-over**)))

(defun run-deferred (reactor conn)
  "Reactor thread: run the work deferred by the frames just processed
(unary handlers a server runs inline, server.lisp), in the order it was
deferred.  If the watchdog hands the reactor to another thread meanwhile,
that thread takes the work behind the handler at hand (GIVE-BACK), and this
one finishes the handler and leaves the loop (%RETIRE)."
  (loop while (conn-deferred conn)
        do (let ((tasks (reverse (with-connection-lock (conn)
                                   ;; Under the lock: a new reactor thread
                                   ;; may give work back (GIVE-BACK).
                                   (shiftf (conn-deferred conn) '())))))
             (loop for rest on tasks by #'cddr
                   do ;; Stored before IN-HANDLER, so the watchdog, which
                      ;; reads them once it sees that set, sees these.
                      (setf (reactor-behind-conn reactor) conn
                            (reactor-behind reactor) (cddr rest))
                      (%enter-handler reactor)
                      (unwind-protect
                           (funcall (the function (second rest)) (first rest))
                        ;; Also when the work unwinds: this thread must not
                        ;; go back to a loop another thread now runs.
                        (unless (%leave-handler reactor)
                          (%retire conn))))))
  ;; Nothing is behind anything now; keep no calls alive.
  (setf (reactor-behind-conn reactor) nil
        (reactor-behind reactor) '()))

;;; ------------------------------------------------------------------
;;; The watchdog

(defun %hand-over (reactor seq)
  "Watchdog: give REACTOR's loop to a new thread if it is still in handler
number SEQ.  The new thread waits for the reactor's lock, so it starts
only once it is the reactor's thread."
  (sb-thread:with-mutex ((reactor-lock reactor))
    (when (and (reactor-in-handler reactor) (= seq (reactor-handler-seq reactor)))
      (let ((new (handler-case
                     (sb-thread:make-thread #'reactor-main
                                            :name "h2 reactor"
                                            :arguments (list reactor (reactor-behind-conn reactor)
                                                             (reactor-behind reactor)))
                   (error () nil))))
        ;; If no thread can be made, the handler keeps the reactor, as
        ;; without a watchdog; the next tick tries again.
        (when new
          (sb-ext:atomic-incf (car **handed-over**))
          (setf (reactor-in-handler reactor) nil
                (reactor-thread reactor) new))))))

(defun %watch (counted)
  "Watchdog, one tick: count the ticks each reactor has spent in its current
handler (unless COUNTED is false: a collection ran) and hand over those over
their slice.  True if any reactor ran a handler since the last tick."
  (let ((busy nil))
    (loop for reactor across *reactors*
          do (let ((seq (reactor-handler-seq reactor)))
               (cond ((/= seq (reactor-watch-seq reactor))
                      (setf busy t
                            (reactor-watch-seq reactor) seq
                            (reactor-watch-ticks reactor) 0))
                     ((reactor-in-handler reactor)
                      (setf busy t)
                      (when counted
                        (when (>= (incf (reactor-watch-ticks reactor)) +slice-ticks+)
                          (setf (reactor-watch-ticks reactor) 0)
                          (%hand-over reactor seq)))))))
    busy))

(defun %disarm-p ()
  "Watchdog: sleep from now on, unless a reactor entered a handler meanwhile."
  (sb-thread:with-mutex (*watchdog-lock*)
    (setf **watchdog-armed** nil)
    (sb-thread:barrier (:memory))
    (if (some #'reactor-in-handler *reactors*)
        (progn (setf **watchdog-armed** t) nil)
        t)))

(defun watchdog-loop ()
  (loop
    (sb-thread:with-mutex (*watchdog-lock*)
      (loop until **watchdog-armed**
            do (sb-thread:condition-wait *watchdog-cv* *watchdog-lock*)))
    (let ((idle 0)
          (gc sb-ext:*gc-run-time*))
      (declare (type fixnum idle))
      (loop
        (sleep (/ +tick-us+ 1000000d0))
        (let ((gc-now sb-ext:*gc-run-time*))
          (if (handler-case (%watch (= gc gc-now))
                (serious-condition (e)
                  (ignore-errors
                   (format *error-output* "~&clgrpc: reactor watchdog: ~A~%" e))
                  nil))
              (setf idle 0)
              (incf idle))
          (setf gc gc-now))
        (when (and (>= idle +idle-ticks+) (%disarm-p))
          (return))))))
