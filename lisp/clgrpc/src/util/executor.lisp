;;;; The executor: an elastic pool of worker threads that runs the gRPC
;;;; server's handlers, and the work the HTTP/2 reactors hand off.
;;;;
;;;; This file holds the pool's state and its interface: making one,
;;;; submitting tasks, shutting it down.  What a worker does (take a task,
;;;; spin, park, wake another) is in executor-workers.lisp; when the pool
;;;; grows, in executor-monitor.lisp; the turns tasks take while the heap
;;;; is full, in executor-turns.lisp.
;;;;
;;;; A task is a function and one argument (no closure per task).  Tasks of
;;;; one lane start in the order they were submitted; they may run at the
;;;; same time on different workers, so a caller that needs order within a
;;;; stream submits the stream's work as one task.

(in-package #:clgrpc.util)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(declaim (ftype function %wake-parked %wake-monitor monitor-loop))

(defstruct (lane (:constructor make-lane ()))
  (lock (sb-thread:make-mutex :name "executor lane") :type sb-thread:mutex)
  ;; Three entries a task: function, argument, and when it was queued (NOW-US).
  (tasks (make-fifo 96) :type fifo)
  ;; Tasks queued: written under LOCK, read without it by workers looking
  ;; for work and by the monitor.
  (count 0 :type fixnum))

(defstruct (worker (:constructor make-worker (stat)))
  ;; A descriptor of this thread's /proc/thread-self/stat (or -1), whose
  ;; state the monitor reads to tell a worker that waits (sleeping) from one
  ;; that computes or waits for a CPU (running).
  (stat -1 :type fixnum)
  (busy nil)                            ; in a task
  ;; Waiting for a lock another thread holds (WITH-WORKER-MUTEX), or for
  ;; a turn to run while the heap is full (%WAIT-FOR-TURN).
  (on-lock nil)
  ;; When it took its turn to run a task (NIL: it is not about to run or
  ;; running one).
  (turn-us nil :type (or null fixnum))
  ;; Once its turn has lapsed (executor-turns.lisp): when its state was
  ;; last read, and since when, with no collection in between (ASLEEP-GC,
  ;; the collectors' run time then), it has been seen asleep (NIL: seen
  ;; running, or not read yet).
  (state-read-us 0 :type fixnum)
  (asleep-since nil :type (or null fixnum))
  (asleep-gc 0)
  ;; Parked: on the executor's stack of parked workers (PARK-LOCK), waiting
  ;; on its own queue WAKE-CV for WOKEN, which whoever takes it off the stack
  ;; sets (under PARK-LOCK and WAKE-LOCK) and then notifies, after releasing
  ;; both (%NOTIFY-WOKEN).
  (parked nil)
  (woken nil)
  (wake-lock (sb-thread:make-mutex :name "worker wake") :type sb-thread:mutex)
  (wake-cv (sb-thread:make-waitqueue) :type sb-thread:waitqueue)
  ;; Retired: no longer counted in THREADS (%PARK).
  (retired nil))

(defvar *worker* nil "This thread's WORKER, in a worker thread.")

;;; A worker waiting for a lock sleeps as one waiting on I/O does, but it
;;; waits on another thread's work, not on the world: the locks it meets
;;; (a connection's) are held briefly and never across a wait, so their
;;; holder runs.  More workers would only queue on the same lock, each
;;; holding what its task built (a 2 MiB response, say), so the monitor
;;; does not count such a worker as a reason to grow the pool.

(defun %grab-marked (mutex)
  "Wait for MUTEX, taken by another thread, marked as waiting for a lock
while this worker does (and unmarked however the wait ends)."
  (let ((worker *worker*))
    (unwind-protect
         (progn (setf (worker-on-lock worker) t)
                (sb-thread:grab-mutex mutex))
      (setf (worker-on-lock worker) nil))))

(defun call-with-worker-mutex (function mutex)
  "FUNCTION with MUTEX held, as SB-THREAD:WITH-MUTEX calls it (interrupts
allowed only while waiting and in FUNCTION, so no unwind loses the lock)."
  (declare (type function function) (type sb-thread:mutex mutex))
  (let ((got nil))
    (sb-sys:without-interrupts
      (unwind-protect
           (when (setf got (sb-sys:allow-with-interrupts
                             (if (and *worker* (sb-thread:mutex-owner mutex))
                                 (%grab-marked mutex)
                                 (sb-thread:grab-mutex mutex))))
             (sb-sys:with-local-interrupts (funcall function)))
        (when got
          (sb-thread:release-mutex mutex))))))

(defmacro with-worker-mutex ((mutex) &body body)
  "SB-THREAD:WITH-MUTEX for a lock held only briefly and never across a
wait: a worker that finds it taken waits without growing the pool."
  (let ((f (gensym "BODY")))
    `(flet ((,f () ,@body))
       (declare (dynamic-extent #',f))
       (call-with-worker-mutex #',f ,mutex))))

(defstruct (executor (:constructor %make-executor))
  (name "clgrpc worker" :type string)
  (lanes #() :type simple-vector)
  (park-lock (sb-thread:make-mutex :name "executor park") :type sb-thread:mutex)
  ;; Parked workers, the most recently parked first (PARK-LOCK).
  (parked '() :type list)
  (done-cv (sb-thread:make-waitqueue) :type sb-thread:waitqueue)
  ;; Parked workers, and those woken that have not yet run (atomic).
  (idle 0 :type sb-ext:word)
  ;; Workers taken off the stack that have not yet run (atomic): each will
  ;; take one of the queued tasks, so no other is woken for it.
  (waking 0 :type sb-ext:word)
  (threads 0 :type fixnum)              ; workers alive or being started (PARK-LOCK)
  (spinning 0 :type sb-ext:word)        ; workers spinning for work (0 or 1, atomic)
  ;; Recent spins that found work, less those that did not (0 to
  ;; +SPIN-CREDIT-MAX+): spins are long only while they pay.
  (spin-credit 0 :type fixnum)
  (next-home 0 :type fixnum)            ; home lane of the next worker (PARK-LOCK)
  (workers '() :type list)              ; every live worker (PARK-LOCK)
  ;; Ticks in a row with busy CPUs and most workers waiting, and where in
  ;; WORKERS the next sample starts (PARK-LOCK).
  (waiting-streak 0 :type fixnum)
  (sample-start 0 :type fixnum)
  (min-threads 2 :type fixnum)
  (max-threads 4096 :type fixnum)
  (keep-idle 16 :type fixnum)
  (idle-timeout-us 30000000 :type fixnum)
  (surplus-idle-us 10000000 :type fixnum)
  (grow-after-us 1000 :type fixnum)
  (heap-limit 0 :type fixnum)
  (crowded-grown-us 0 :type fixnum)     ; when the pool last grew while crowded and busy
  ;; Turns while the heap is full (executor-turns.lisp): the heap in use
  ;; past which tasks take turns, whether they do now, how many may run at
  ;; once, how long a turn counts, how many workers wait for one, which of
  ;; them looks again on a timer, and where they wait (PARK-LOCK).
  (turn-heap-limit 0 :type fixnum)
  (turns-on nil)
  (turns 4 :type fixnum)
  (turn-lapse-us 100000 :type fixnum)
  (turn-waiters 0 :type fixnum)
  (turn-poller nil)
  (turn-cv (sb-thread:make-waitqueue) :type sb-thread:waitqueue)
  (cpus 1 :type fixnum)
  (wrapper nil :type (or null function))
  ;; The monitor: its thread, and whether it is ticking (PARK-LOCK).
  (monitor nil)
  (monitor-cv (sb-thread:make-waitqueue) :type sb-thread:waitqueue)
  (monitor-awake nil)
  (shutdown nil))

(defun make-executor (&key (name "clgrpc worker") (lanes 1) (min-threads 2)
                           (max-threads 4096) (keep-idle 16) (idle-timeout 30)
                           (surplus-idle 10)
                           (grow-after 0.001) (cpus (usable-cpu-count))
                           (heap-limit (floor (sb-ext:dynamic-space-size) 4))
                           (turn-heap-limit (floor (sb-ext:dynamic-space-size) 2))
                           (turns (* 2 cpus)) (turn-lapse 0.1) wrapper)
  "An executor with LANES lanes (one per thread that submits batches).
WRAPPER, if given, is called with a thunk in each worker thread and must
call it: the place to bind per-thread specials such as scratch buffers.
CPUS is how many CPUs the process may use, against which the monitor tells
waiting workers from busy ones.  A parked worker exits after IDLE-TIMEOUT
seconds, or after SURPLUS-IDLE (at most IDLE-TIMEOUT) while more than
KEEP-IDLE others are parked too.  Ten seconds by default, a trade-off: a
parked thread holds some 50 KB and adds 20 to 50 us to every collection
(after two it has cost what starting it again would, about 70 us), but a
burst of blocking calls waits for every thread it must start, so a pool
sized for one outlives the pauses between bursts (a second was too short:
a burst after one restarted hundreds of threads, and calls waited for
them) and shrinks soon after.  While the heap in use exceeds HEAP-LIMIT
octets, the pool grows by one worker a tick while the CPUs idle, and by
one every 100 ms while they are busy.  While it exceeds TURN-HEAP-LIMIT
(half the heap), at most TURNS tasks (two per CPU) run at once, counting
those that started within TURN-LAPSE seconds (executor-turns.lisp)."
  (let ((executor (%make-executor
                   :name name
                   :lanes (coerce (loop repeat (max 1 lanes) collect (make-lane)) 'simple-vector)
                   :min-threads (max 1 min-threads)
                   :max-threads (max 1 min-threads max-threads)
                   :keep-idle (max 1 keep-idle)
                   :idle-timeout-us (round (* idle-timeout 1000000))
                   :surplus-idle-us (round (* (min surplus-idle idle-timeout) 1000000))
                   :grow-after-us (round (* grow-after 1000000))
                   :heap-limit heap-limit
                   :turn-heap-limit turn-heap-limit
                   :turns (max 1 turns)
                   :turn-lapse-us (round (* turn-lapse 1000000))
                   :cpus (max 1 cpus)
                   :wrapper wrapper)))
    (setf (executor-monitor executor)
          (sb-thread:make-thread #'monitor-loop :name (format nil "~A monitor" name)
                                                :arguments (list executor)))
    executor))

(defun executor-queued-count (executor)
  "Tasks waiting for a worker (read without a lock: an estimate)."
  (loop for lane across (executor-lanes executor) sum (lane-count lane) fixnum))

(defun %queued-p (executor)
  (loop for lane across (executor-lanes executor)
          thereis (plusp (lane-count (the lane lane)))))

(defun %unclaimed-p (executor)
  "Whether more tasks are queued than workers awake and without a task are
about to take: those woken that have not yet run, the one spinning, and
those waiting for a turn (executor-turns.lisp), which all look at the
queue before they sleep again.  An estimate, under PARK-LOCK or not: tasks
are queued and taken under their lanes' locks, and workers start and stop
spinning without a lock.  What makes it enough is that whoever queues a
task, or takes one and leaves others, asks again afterwards
(%AFTER-SUBMIT, %WAKE-ANOTHER), and the monitor asks on every tick."
  (> (executor-queued-count executor)
     (+ (executor-waking executor)
        (executor-spinning executor)
        (executor-turn-waiters executor))))

(declaim (inline %notify-woken))
(defun %notify-woken (worker)
  "Wake WORKER (if any), marked woken by %WAKE-PARKED, holding no lock.
Notified under a lock, it would often run at once on the waker's CPU and
then wait for the lock the waker holds: two more context switches a
wake-up, which blocking handlers pay on every call.  SBCL documents
CONDITION-NOTIFY as called with the queue's mutex held; its Linux
implementation (a token store and a futex wake) needs no lock, and the
flag it announces was set under WAKE-LOCK, which the waiter checks before
it waits."
  (when worker
    (sb-thread:condition-notify (worker-wake-cv worker))))

(defmacro with-park-lock-then-notify ((executor) &body body)
  "Run BODY under EXECUTOR's PARK-LOCK, then notify the worker it returns
(from %WAKE-PARKED, or NIL), holding no lock.  Interrupts wait until the
notification is made: a worker marked woken but not notified would sleep
until its idle timeout."
  (let ((worker (gensym "WORKER")))
    `(sb-sys:without-interrupts
       (let ((,worker (sb-thread:with-mutex ((executor-park-lock ,executor))
                        ,@body)))
         (%notify-woken ,worker)))))

;;; ------------------------------------------------------------------
;;; Submitting

(declaim (inline %lane))
(defun %lane (executor index)
  (let ((lanes (executor-lanes executor)))
    (svref lanes (mod (the fixnum index) (length lanes)))))

(defun %push-task (lane function argument now)
  (let ((tasks (lane-tasks lane)))
    (fifo-push tasks function)
    (fifo-push tasks argument)
    (fifo-push tasks now)
    (incf (lane-count lane))))

(defun %wake-for-unclaimed (executor)
  "Wake a parked worker for a queued task that no worker awake is about to
take (%UNCLAIMED-P), the one parked last; with none parked, have the
monitor look.  The worker is notified after the park lock is released
(%NOTIFY-WOKEN)."
  (when (%unclaimed-p executor)
    (with-park-lock-then-notify (executor)
      (and (%unclaimed-p executor)
           (or (%wake-parked executor)
               (progn (%wake-monitor executor) nil))))))

(defun %after-submit (executor)
  "Tasks were queued: make sure a worker will take them (%WAKE-FOR-UNCLAIMED:
one worker; each that takes a task and leaves others wakes the next,
%WAKE-ANOTHER).  The barrier pairs with the one in %PARK: either the
parking worker sees the task, or this sees it counted as idle."
  (sb-thread:barrier (:memory))
  (%wake-for-unclaimed executor))

(defun executor-submit (executor lane-index function argument)
  "Queue (FUNCTION ARGUMENT) on lane LANE-INDEX.  Returns NIL if the
executor is shut down."
  (declare (type executor executor))
  (let ((lane (%lane executor lane-index)))
    (sb-thread:with-mutex ((lane-lock lane))
      (when (executor-shutdown executor)
        (return-from executor-submit nil))
      (%push-task lane function argument (now-us))))
  (%after-submit executor)
  t)

(defun executor-submit-batch (executor lane-index tasks)
  "Queue TASKS, a list (function argument function argument ...), on lane
LANE-INDEX in one hold of its lock, waking at most one worker.  Returns NIL
(and queues nothing) if the executor is shut down."
  (declare (type executor executor) (type list tasks))
  (let ((lane (%lane executor lane-index))
        (now (now-us)))
    (sb-thread:with-mutex ((lane-lock lane))
      (when (executor-shutdown executor)
        (return-from executor-submit-batch nil))
      (loop for (function argument) on tasks by #'cddr
            do (%push-task lane function argument now))))
  (%after-submit executor)
  t)

;;; ------------------------------------------------------------------
;;; Shutdown

(defun shutdown-executor (executor &key (timeout 5))
  "Stop accepting tasks, let queued ones run, and wait up to TIMEOUT seconds
for the workers to exit.  Returns true if they all did."
  (let ((deadline (+ (now-us) (round (* timeout 1000000)))))
    (loop for lane across (executor-lanes executor)
          do (sb-thread:with-mutex ((lane-lock lane))
               (setf (executor-shutdown executor) t)))
    (let ((lock (executor-park-lock executor)))
      (sb-thread:with-mutex (lock)
        (setf (executor-shutdown executor) t)
        (loop for worker = (%wake-parked executor)
              while worker
              do (%notify-woken worker))
        (sb-thread:condition-broadcast (executor-monitor-cv executor))
        (sb-thread:condition-broadcast (executor-turn-cv executor))
        (loop while (plusp (executor-threads executor))
              do (unless (wait-on (executor-done-cv executor) lock deadline)
                   (return)))
        (zerop (executor-threads executor))))))
