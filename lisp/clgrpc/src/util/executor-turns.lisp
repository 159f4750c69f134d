;;;; Turns: while the heap is full, only so many of the executor's tasks run
;;;; at once.
;;;;
;;;; Handlers allocate what they build.  SBCL asks for a collection once the
;;;; allocation since the last passes a trigger, but the collection runs
;;;; only once every thread has stopped for it, and threads that have not
;;;; yet stopped allocate on.  With a hundred workers runnable on two CPUs,
;;;; each building a 3 MiB response, that lets hundreds of megabytes in past
;;;; the trigger each time, and a heap already half full has no room for
;;;; them.  So while the heap in use exceeds TURN-HEAP-LIMIT (half the heap;
;;;; the memory budgets keep what is live well below it), a worker takes a
;;;; turn before it takes a task, and at most TURNS of them (two per CPU)
;;;; hold one at once.  Turns are taken before the task, so tasks stay
;;;; queued, in order, while workers wait.  A turn older than TURN-LAPSE
;;;; (100 ms) no longer counts once its worker has been seen asleep for
;;;; 10 ms with no collection in between (a thread stopped for one looks
;;;; asleep too): tasks that wait (a handler sleeping, or one waiting for its
;;;; peer's window) hold the others back not much longer than that.  One that
;;;; still runs, or waits for a CPU, keeps counting: on CPUs shared with
;;;; other processes a handler building its response may take many times
;;;; the lapse, and letting another start beside it each time would let in
;;;; the very allocation turns hold back.
;;;; Turns stay on until the heap in use falls below seven eighths of
;;;; the limit, so that a collection that only just brings it under does
;;;; not let every waiting worker run at once.  While workers wait for a
;;;; turn the pool does not grow (%WORKERS-WANTED): more workers would only
;;;; wait too.
;;;;
;;;; Every worker notes when it took its turn, full heap or not (one clock
;;;; read a task), so tasks that started before the heap filled count too.

(in-package #:clgrpc.util)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +turn-poll-us+ 10000
  "How often the waiting worker that polls looks again at most: turns
lapse, and a collection may empty the heap, without anyone signalling it.
Also how long a worker whose turn lapsed must be seen asleep before its
turn stops counting.")

(defconstant +turn-backstop-us+ 1000000
  "How long any other waiting worker waits at most before it looks again
itself; it is woken as soon as a turn is handed on.")

(defun %turns-on-p (executor)
  "Whether tasks take turns now: the heap in use is past TURN-HEAP-LIMIT,
or turns are on and it is still past seven eighths of it."
  (let ((usage (sb-kernel:dynamic-usage))
        (limit (executor-turn-heap-limit executor)))
    (declare (type fixnum limit))
    (if (executor-turns-on executor)
        (or (> usage (- limit (ash limit -3)))
            (setf (executor-turns-on executor) nil))
        (and (> usage limit)
             (setf (executor-turns-on executor) t)))))

(declaim (inline %begin-turn))
(defun %begin-turn (me now)
  "ME takes its turn to run a task at NOW."
  (setf (worker-asleep-since me) nil
        (worker-turn-us me) now))

(defun %read-turn-state (worker now)
  "PARK-LOCK held: read WORKER's state at NOW, and note since when it has
been asleep with no collection in between (a thread stopped for one looks
asleep too)."
  (declare (type fixnum now))
  (setf (worker-state-read-us worker) now)
  (let ((gc sb-ext:*gc-run-time*))
    (cond ((not (%sleeping-p (worker-stat worker)))
           (setf (worker-asleep-since worker) nil))
          ((or (null (worker-asleep-since worker))
               (not (eql gc (worker-asleep-gc worker))))
           (setf (worker-asleep-since worker) now
                 (worker-asleep-gc worker) gc)))))

(defun %lapsed-turn-held-p (worker now)
  "PARK-LOCK held: whether WORKER, whose turn began longer than TURN-LAPSE
ago, still holds it: unless it has been seen asleep, on reads at least
+TURN-POLL-US+ apart with no collection between them.  Its state is read
again once +TURN-POLL-US+, or a quarter of the time it has been seen
asleep if that is longer, has passed since the last read, so workers
asleep for long cost few reads however many there are.  Without /proc, a turn lapses by time
alone; a worker waiting for a lock (WITH-WORKER-MUTEX) keeps its turn."
  (declare (type fixnum now))
  (cond ((< (worker-stat worker) 0) nil)
        ((worker-on-lock worker) t)
        (t
         (let* ((since (worker-asleep-since worker))
                (asleep (if since (- now (the fixnum since)) 0))
                (interval (max +turn-poll-us+ (ash asleep -2))))
           (declare (type fixnum asleep interval))
           (when (>= (- now (worker-state-read-us worker)) interval)
             (%read-turn-state worker now)))
         (let ((since (worker-asleep-since worker)))
           (not (and since
                     (>= (- now (the fixnum since)) +turn-poll-us+)
                     (eql sb-ext:*gc-run-time* (worker-asleep-gc worker))))))))

(defun %turns-taken (executor me now)
  "PARK-LOCK held: workers other than ME that hold a turn, counted up to
TURNS: those whose turn began within TURN-LAPSE-US of NOW, and then those
with an older turn that still hold it (%LAPSED-TURN-HELD-P, which may read
their state: they are looked at only while the recent ones leave turns
free)."
  (declare (type fixnum now))
  (let ((lapse (executor-turn-lapse-us executor))
        (turns (executor-turns executor))
        (n 0))
    (declare (type fixnum lapse turns n))
    (dolist (worker (executor-workers executor))
      (let ((at (worker-turn-us worker)))
        (when (and at (not (eq worker me)) (< (- now (the fixnum at)) lapse))
          (incf n))))
    (dolist (worker (executor-workers executor) n)
      (when (>= n turns)
        (return n))
      (let ((at (worker-turn-us worker)))
        (when (and at (not (eq worker me)) (>= (- now (the fixnum at)) lapse)
                   (%lapsed-turn-held-p worker now))
          (incf n))))))

(defun %wait-for-turn (executor me)
  "Before ME takes a task, with turns on (%TURNS-ON-P): wait until fewer
than TURNS other workers hold one (%TURNS-TAKEN), marked as waiting for a
lock (the monitor does not count that as a reason to grow the pool), and
note when the turn began.  One waiting worker, the poller, looks again
every +TURN-POLL-US+; the others wait to be woken, so that hundreds of
waiting workers do not all wake each time on CPUs already short.  A worker
that leaves the wait wakes another if turns are left, or if it was the
poller, so that one polls in its place."
  (let ((lock (executor-park-lock executor))
        (turns (executor-turns executor))
        (more nil))
    (declare (type fixnum turns))
    (sb-thread:with-mutex (lock)
      (setf (worker-on-lock me) t)
      (incf (executor-turn-waiters executor))
      (unwind-protect
           (loop
             (let* ((now (now-us))
                    (taken (if (or (executor-shutdown executor)
                                   (not (%turns-on-p executor)))
                               -1
                               (%turns-taken executor me now))))
               (declare (type fixnum taken))
               (when (< taken turns)
                 (%begin-turn me now)
                 (setf more (< (1+ taken) turns))
                 (return))
               (let ((poller (executor-turn-poller executor)))
                 (when (or (null poller) (eq poller me))
                   (setf (executor-turn-poller executor) me))
                 (wait-on (executor-turn-cv executor) lock
                          (+ now (if (eq (executor-turn-poller executor) me)
                                     +turn-poll-us+
                                     +turn-backstop-us+))))))
        ;; A wait unwound (the thread is being destroyed) may have left
        ;; the lock.
        (unless (sb-thread:holding-mutex-p lock)
          (sb-thread:grab-mutex lock))
        (let ((poller (eq (executor-turn-poller executor) me)))
          (when poller
            (setf (executor-turn-poller executor) nil))
          (when (and (> (decf (executor-turn-waiters executor)) 0) (or poller more))
            (sb-thread:condition-notify (executor-turn-cv executor))))
        (setf (worker-on-lock me) nil)))))

(defun %end-turn (executor me)
  "ME's task is over, or there was none: its turn goes to a waiting worker."
  (setf (worker-turn-us me) nil)
  (when (plusp (executor-turn-waiters executor))
    (sb-thread:with-mutex ((executor-park-lock executor))
      (sb-thread:condition-notify (executor-turn-cv executor)))))
