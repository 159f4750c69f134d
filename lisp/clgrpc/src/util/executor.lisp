;;;; The executor: an elastic pool of worker threads that runs the gRPC
;;;; server's handlers, and the work the HTTP/2 reactors hand off.
;;;;
;;;; Work arrives in batches: a reactor hands over everything one read of a
;;;; connection produced in one EXECUTOR-SUBMIT-BATCH, into its own LANE (one
;;;; lane per reactor, each with its own lock), and wakes at most one worker.
;;;; A worker takes one task at a time, from its home lane first and then
;;;; from the others; if it leaves tasks behind that no worker awake (woken
;;;; and not yet run, spinning, or waiting for a turn) is about to take, and
;;;; a worker is parked, it wakes that one, so a batch fans out over the
;;;; workers without the reactor paying a wake-up per task, and no more are
;;;; woken than there are tasks.  (Waking one per task at once started
;;;; blocking handlers a few milliseconds sooner, but let a burst of large
;;;; calls start together, past what the heap limits below could slow.)
;;;; A worker that runs out of work spins
;;;; briefly (one at a time, and only with more than one CPU) before it
;;;; parks, so under load the next batch usually finds a worker awake.
;;;;
;;;; The pool grows as handlers block, as goroutines would: a MONITOR thread
;;;; looks every +TICK-US+ while tasks wait and no worker is free.  When the
;;;; oldest task has waited GROW-AFTER-US, it samples up to eight busy
;;;; workers' states (their /proc/thread-self/stat).  If most are asleep
;;;; (waiting on I/O, a sleep, a lock), the pool grows, up to MAX-THREADS:
;;;; half as many again when the process did not keep its CPUs busy over
;;;; the last tick, an eighth when it did and the workers were asleep two
;;;; ticks in a row.  Workers that run or wait for a CPU compute: more of
;;;; them would only share the CPUs, so tasks wait their turn instead; so do
;;;; workers waiting for a brief lock another thread holds
;;;; (WITH-WORKER-MUTEX).  A tick across a garbage collection, which stops
;;;; every thread, decides nothing.  While the heap in use is past
;;;; HEAP-LIMIT (a quarter of the heap), the pool grows by one worker a
;;;; tick while the CPUs idle, and by one every 100 ms while they are busy:
;;;; each handler started holds what it builds until it finishes, and more
;;;; of them at once than keep the CPUs busy would take the heap the
;;;; collector needs.  Past half the heap, tasks also take turns
;;;; (executor-turns.lisp).  While fewer than MIN-THREADS exist it starts
;;;; them at once.  Reactors never create
;;;; threads: only the monitor does.
;;;;
;;;; Idle workers are not free (every garbage collection stops each thread,
;;;; and on a busy machine each must be scheduled to acknowledge), so a
;;;; parked worker exits after IDLE-TIMEOUT, or after SURPLUS-IDLE when more
;;;; than KEEP-IDLE others are parked too, down to MIN-THREADS.  Parked
;;;; workers form a stack, each waiting on its own flag and queue: a wake-up
;;;; takes the one parked last, so under steady load the same few workers run
;;;; and the rest of a pool grown for a burst stay parked until they retire.
;;;; The waker marks it under the locks and notifies it after releasing
;;;; them, so that the woken worker, often run at once on the waker's CPU,
;;;; finds no lock held.
;;;;
;;;; A task is a function and one argument (no closure per task).  Tasks of
;;;; one lane start in the order they were submitted; they may run at the
;;;; same time on different workers, so a caller that needs order within a
;;;; stream submits the stream's work as one task.

(in-package #:clgrpc.util)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +tick-us+ 1000 "How often the monitor looks while tasks wait.")
(defconstant +monitor-idle-ticks+ 10
  "Ticks with nothing waiting after which the monitor sleeps until woken.")
(defconstant +spin-us+ 50
  "How long a worker that ran out of work looks for more before it parks,
while spinning pays (SPIN-CREDIT).")
(defconstant +short-spin-us+ 3
  "How long it looks while spinning has not paid lately: under light load
work arrives far apart, and a long spin would burn a CPU per call.")
(defconstant +spin-credit-max+ 8)
(defconstant +clock-process-cputime+ 2 "CLOCK_PROCESS_CPUTIME_ID on Linux.")

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
  ;; a turn to run while the heap is full (%TAKE-TURN).
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

(defconstant +crowded-grow-after-us+ 100000
  "While the heap is crowded and the CPUs busy, how often the pool may grow
by one worker.")

(defconstant +sampled-workers+ 8
  "Busy workers whose CPU clocks the monitor reads per tick, at most.")

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
;;; Workers

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

(defun %oldest-lane (executor home)
  "The lane whose first task has waited longest (HOME if none waits)."
  (declare (type fixnum home))
  (let ((best home) (oldest most-positive-fixnum)
        (lanes (executor-lanes executor)))
    (declare (type fixnum best oldest))
    (dotimes (i (length lanes) best)
      (let ((lane (svref lanes i)))
        (declare (type lane lane))
        (when (plusp (lane-count lane))
          (sb-thread:with-mutex ((lane-lock lane))
            (let ((tasks (lane-tasks lane)))
              (unless (fifo-empty-p tasks)
                (let* ((items (fifo-items tasks))
                       (queued (svref items (mod (+ (fifo-head tasks) 2) (length items)))))
                  (declare (type fixnum queued))
                  (when (< queued oldest)
                    (setf oldest queued best i)))))))))))

(defun %take-task (executor home)
  "The oldest task of lane HOME, else of the next lane that has one:
(values function argument), or NIL."
  (declare (type fixnum home))
  (let* ((lanes (executor-lanes executor))
         (n (length lanes)))
    (dotimes (k n nil)
      (let ((lane (svref lanes (mod (+ home k) n))))
        (declare (type lane lane))
        (when (plusp (lane-count lane))
          (sb-thread:with-mutex ((lane-lock lane))
            (when (plusp (lane-count lane))
              (let* ((tasks (lane-tasks lane))
                     (function (fifo-pop tasks))
                     (argument (fifo-pop tasks)))
                (fifo-pop tasks)
                (decf (lane-count lane))
                (return-from %take-task (values function argument))))))))))

(defun %spin-for-work (executor)
  "Look for work for a while if no other worker is spinning: +SPIN-US+
while recent spins found work, +SHORT-SPIN-US+ otherwise.  True if some
was seen.  Never with one CPU: the spin would only keep the thread that
submits work off it."
  (when (> (executor-cpus executor) 1)
    (let* ((credit (executor-spin-credit executor))
           (until (+ (now-us) (if (plusp credit) +spin-us+ +short-spin-us+)))
           (found nil)
           (spun nil))
      ;; SPINNING is reset however the spin ends, and no interrupt comes
      ;; between taking it and the cleanup that resets it: left at 1, it
      ;; would keep every other worker from spinning, and count as a worker
      ;; about to take a task.
      (sb-sys:without-interrupts
        (unwind-protect
             (when (zerop (sb-ext:compare-and-swap (executor-spinning executor) 0 1))
               (setf spun t)
               (sb-sys:with-local-interrupts
                 (loop
                   (when (%queued-p executor)
                     (setf found t)
                     (return))
                   (when (or (executor-shutdown executor) (> (now-us) until))
                     (return))
                   (loop repeat 32 do (sb-ext:spin-loop-hint)))))
          (when spun
            (setf (executor-spinning executor) 0))))
      (when spun
        (setf (executor-spin-credit executor) (if found
                                                  (min +spin-credit-max+ (1+ credit))
                                                  (max 0 (1- credit)))))
      found)))

(defun %wake-parked (executor)
  "PARK-LOCK held: take the worker parked last off the stack, marked woken,
and return it (NIL if none is parked); the caller notifies it with
%NOTIFY-WOKEN once it has released PARK-LOCK.  The last parked is the one
whose cache and stack are warm, and under steady load the same few take
the work while the rest of a pool grown for a burst stay parked, and
retire once their time is up.  It counts as idle, and as waking, until it
runs (%TAKE-WAKE-UP): the monitor starts no worker, and no other worker is
woken, for the task it is about to take."
  (sb-sys:without-interrupts
    (let ((worker (pop (executor-parked executor))))
      (when worker
        (sb-thread:with-mutex ((worker-wake-lock worker))
          (setf (worker-parked worker) nil
                (worker-woken worker) t)
          (sb-ext:atomic-incf (executor-waking executor)))
        worker))))

(defun %take-wake-up (executor me)
  "WAKE-LOCK held: consume the wake-up marked for ME, and stop counting it
as waking and idle, in one step that no interrupt splits (an unwind in
between would leave the counts raised for good)."
  (sb-sys:without-interrupts
    (setf (worker-woken me) nil)
    (sb-ext:atomic-decf (executor-waking executor))
    (sb-ext:atomic-decf (executor-idle executor))))

(defun %wait-woken (executor me deadline)
  "Wait until ME is woken (true: the wake-up is consumed, %TAKE-WAKE-UP) or
the clock passes DEADLINE (NIL)."
  (declare (type fixnum deadline))
  (let ((lock (worker-wake-lock me)))
    (sb-thread:with-mutex (lock)
      (loop
        (when (worker-woken me)
          (%take-wake-up executor me)
          (return t))
        (unless (wait-on (worker-wake-cv me) lock deadline)
          (when (worker-woken me)
            (%take-wake-up executor me)
            (return t))
          (return nil))))))

(defun %unpark-self (executor me)
  "PARK-LOCK held: ME, parked or woken, stops counting as idle: off the
stack if still on it (NIL), or, taken off it meanwhile, with the wake-up
meant for it consumed (true)."
  (cond ((worker-parked me)
         (sb-sys:without-interrupts
           (setf (executor-parked executor) (delete me (executor-parked executor) :count 1)
                 (worker-parked me) nil)
           (sb-ext:atomic-decf (executor-idle executor)))
         nil)
        ;; Marked woken under PARK-LOCK as it was taken off, so this sees it.
        ((worker-woken me)
         (sb-thread:with-mutex ((worker-wake-lock me))
           (%take-wake-up executor me))
         t)
        (t (error "executor: a worker neither parked nor woken unparks itself"))))

(declaim (notinline %clear-stack-below))
(defun %clear-stack-below ()
  "Zero 8 KiB of stack below the caller's frame, where the frames of its
next wait go.  Collections scan each stopped thread's stack conservatively,
and the frames of a wait leave gaps that still hold what the worker's last
task put there: a parked worker then kept its last response (megabytes,
for a large call) alive until it ran again or retired.  Called from
WORKER-LOOP, whose own frame holds nothing of a task (%TAKE-AND-RUN),
before each wait between tasks (parking, and a turn while the heap is
full), so that the wait's frames lie on cleared stack.  Not before a spin,
which is brief and often finds work at once."
  (let ((words (make-array 1024 :element-type 'sb-ext:word :initial-element 0)))
    (declare (dynamic-extent words))
    (aref words 1023)))

(defun %park (executor)
  "Wait for work.  Returns true to go on, NIL to exit: shut down, or parked
with no work for IDLE-TIMEOUT (SURPLUS-IDLE when KEEP-IDLE others are
parked too) while more than MIN-THREADS are alive."
  (let ((lock (executor-park-lock executor))
        (me *worker*)
        ;; When this worker began to wait.  Not reset by a wake-up that
        ;; brings it no task (another worker took it), so that such
        ;; wake-ups cannot keep a surplus worker for ever.  Reset by a
        ;; timeout that does not retire it (it is one of MIN-THREADS),
        ;; which then waits a timeout again.
        (since 0))
    (declare (type fixnum since))
    (loop
      (let ((deadline 0))
        (declare (type fixnum deadline))
        (sb-thread:with-mutex (lock)
          (when (%queued-p executor)
            (return t))
          (when (executor-shutdown executor)
            (return nil))
          ;; In one step, as %UNPARK-SELF undoes it.
          (sb-sys:without-interrupts
            (push me (executor-parked executor))
            (setf (worker-parked me) t)
            (sb-ext:atomic-incf (executor-idle executor)))
          ;; Pairs with %AFTER-SUBMIT's barrier.
          (sb-thread:barrier (:memory))
          (when (%queued-p executor)
            (%unpark-self executor me)
            (return t))
          (when (zerop since)
            (setf since (now-us)))
          (setf deadline (+ since (if (> (executor-idle executor) (executor-keep-idle executor))
                                      (executor-surplus-idle-us executor)
                                      (executor-idle-timeout-us executor)))))
        ;; Its own lock and queue: collections, which interrupt every
        ;; thread's wait, do not send hundreds of parked workers after one
        ;; mutex, and a wake-up marked before the wait is kept.
        (if (%wait-woken executor me deadline)
            (progn
              (when (< (- (now-us) since) +spin-us+)
                ;; Work came within a long spin of parking: spinning
                ;; would have saved the wake-up.
                (setf (executor-spin-credit executor)
                      (min +spin-credit-max+ (1+ (executor-spin-credit executor)))))
              (when (%queued-p executor)
                (return t)))
            (sb-thread:with-mutex (lock)
              (cond ((%unpark-self executor me)
                     ;; Woken as the wait timed out.
                     (return t))
                    ((and (not (%queued-p executor))
                          (> (executor-threads executor) (executor-min-threads executor)))
                     ;; Counted out now, in this hold of the lock, so
                     ;; that workers timing out together do not all
                     ;; retire below MIN-THREADS.
                     (decf (executor-threads executor))
                     (setf (worker-retired me) t)
                     (return nil))
                    (t (setf since 0)))))))))

(defun %wake-another (executor)
  "This worker took a task and left others queued: wake a parked worker for
one that no worker awake is about to take; with none parked, have the
monitor look (the workers may all be about to block in their handlers)."
  (when (or (plusp (executor-idle executor)) (not (executor-monitor-awake executor)))
    (%wake-for-unclaimed executor)))

(defun %heap-crowded-p (executor)
  (> (sb-kernel:dynamic-usage) (executor-heap-limit executor)))

(declaim (ftype function %wait-for-turn %begin-turn %end-turn %turns-on-p))

(defun %run-task (function argument)
  ;; Tasks handle their own errors; this only keeps a bug in one task from
  ;; killing the worker (and, with the debugger disabled, the process).
  (handler-case (funcall (the function function) argument)
    (serious-condition (e)
      (log-line "a task on the executor failed: ~A" e))))

(defun %open-stat ()
  "A descriptor of this thread's /proc status line, or -1 where /proc has
none."
  (or (sb-unix:unix-open "/proc/thread-self/stat" sb-unix:o_rdonly 0) -1))

(declaim (notinline %take-and-run))
(defun %take-and-run (executor me lane)
  "ME holding its turn: take a task (from LANE first), and run it; true if
there was one.  Its own frame, popped before the worker waits: the task's
function and argument stay in no frame of WORKER-LOOP's."
  (declare (type fixnum lane))
  (multiple-value-bind (function argument) (%take-task executor lane)
    (cond (function
           (%wake-another executor)
           (setf (worker-busy me) t)
           (unwind-protect (%run-task function argument)
             (setf (worker-busy me) nil)
             (%end-turn executor me))
           t)
          (t (%end-turn executor me)
             nil))))

(defun worker-loop (executor home)
  (declare (type executor executor) (type fixnum home))
  (let* ((me (make-worker (%open-stat)))
         (*worker* me)
         (takes 0)
         ;; Whether it leaves as it should: retired, or the executor shut
         ;; down, with nothing to hand on.
         (done nil))
    (declare (type fixnum takes))
    (sb-thread:with-mutex ((executor-park-lock executor))
      (push me (executor-workers executor)))
    (unwind-protect
         (loop
           ;; A turn, waited for (executor-turns.lisp) on cleared stack
           ;; (%CLEAR-STACK-BELOW) while the heap is full.
           (if (%turns-on-p executor)
               (progn (%clear-stack-below)
                      (%wait-for-turn executor me))
               (%begin-turn me (now-us)))
           ;; Every eighth task comes from the lane whose task has waited
           ;; longest, so no lane starves while its workers are held.
           (unless (%take-and-run executor me (if (and (zerop (logand (incf takes) 7))
                                                        (> (length (executor-lanes executor)) 1))
                                                   (%oldest-lane executor home)
                                                   home))
             (unless (or (%spin-for-work executor)
                         (progn (%clear-stack-below)
                                (%park executor)))
               (setf done t)
               (return))))
      (sb-sys:without-interrupts
        (sb-thread:with-mutex ((executor-park-lock executor))
          (setf (executor-workers executor) (delete me (executor-workers executor) :test #'eq))
          (when (>= (worker-stat me) 0)
            (sb-unix:unix-close (shiftf (worker-stat me) -1)))
          (unless (worker-retired me)
            (decf (executor-threads executor)))
          (sb-thread:condition-broadcast (executor-done-cv executor))
          ;; Unwound while parked, or with a wake-up meant for it.
          (when (or (worker-parked me) (worker-woken me))
            (setf done nil)
            (%unpark-self executor me)))
        ;; Unwound: a task it was woken for, or left behind, goes to another
        ;; worker.  A worker that retires leaves none: it found no work.
        (unless done
          (%wake-for-unclaimed executor))))))

(defun %start-workers (executor n)
  "Monitor thread: start N workers, already counted in THREADS."
  (dotimes (i n)
    (let ((home (sb-thread:with-mutex ((executor-park-lock executor))
                  (prog1 (executor-next-home executor)
                    (setf (executor-next-home executor)
                          (mod (1+ (executor-next-home executor))
                               (length (executor-lanes executor))))))))
      (handler-case
          (sb-thread:make-thread
           (lambda ()
             (let ((wrapper (executor-wrapper executor)))
               (if wrapper
                   (funcall wrapper (lambda () (worker-loop executor home)))
                   (worker-loop executor home))))
           :name (executor-name executor))
        (error ()
          ;; Out of threads or memory: uncount it; the next tick tries again.
          (sb-thread:with-mutex ((executor-park-lock executor))
            (decf (executor-threads executor))))))))

;;; ------------------------------------------------------------------
;;; The monitor

(defun %wake-monitor (executor)
  "PARK-LOCK held: have the monitor look now."
  (unless (executor-monitor-awake executor)
    (setf (executor-monitor-awake executor) t)
    (sb-thread:condition-notify (executor-monitor-cv executor))))

(defun %oldest-wait-us (executor now)
  "How long the oldest queued task has waited."
  (let ((oldest 0))
    (declare (type fixnum oldest))
    (loop for lane across (executor-lanes executor)
          do (when (plusp (lane-count (the lane lane)))
               (sb-thread:with-mutex ((lane-lock lane))
                 (let ((tasks (lane-tasks lane)))
                   (unless (fifo-empty-p tasks)
                     ;; A task's third entry is when it was queued.
                     (setf oldest (max oldest (- now (the fixnum (fifo-peek tasks 2))))))))))
    oldest))

(declaim (inline process-cpu-us))
(defun process-cpu-us ()
  (multiple-value-bind (seconds nanoseconds) (sb-unix::clock-gettime +clock-process-cputime+)
    (declare (type (unsigned-byte 40) seconds) (type (integer 0 999999999) nanoseconds))
    (the fixnum (+ (* seconds 1000000) (floor nanoseconds 1000)))))

(defun %sleeping-p (fd)
  "Whether the thread whose /proc stat line FD reads is asleep (state S or
D: waiting on a sleep, I/O, a lock), as against running or runnable."
  (let* ((buf (make-array 256 :element-type '(unsigned-byte 8)))
         (n (sb-sys:with-pinned-objects (buf)
              (sb-alien:alien-funcall
               (sb-alien:extern-alien "pread" (function sb-alien:long sb-alien:int
                                                        sb-sys:system-area-pointer
                                                        sb-alien:unsigned-long sb-alien:long))
               fd (sb-sys:vector-sap buf) (length buf) 0))))
    (declare (type (simple-array (unsigned-byte 8) (*)) buf) (type fixnum n)
             (dynamic-extent buf))
    ;; "TID (NAME) STATE ...": NAME may hold anything, so the state follows
    ;; the last parenthesis.
    (let ((close (and (plusp n) (position 41 buf :end n :from-end t))))
      (and close (< (+ close 2) n)
           (member (aref buf (+ close 2)) '(83 68))))))   ; #\S #\D

(defun %workers-waiting-p (executor)
  "PARK-LOCK held: whether most busy workers sampled (up to
+SAMPLED-WORKERS+) are asleep: they wait (on I/O, a sleep, a condition)
rather than compute, wait for a CPU, or wait for a lock another thread
holds (WITH-WORKER-MUTEX)."
  (let ((sampled 0) (waiting 0))
    (declare (type fixnum sampled waiting))
    ;; Successive ticks start further along the list, so that they sample
    ;; other workers.
    (let* ((workers (executor-workers executor))
           (start (mod (incf (executor-sample-start executor)) (max 1 (length workers)))))
      (setf workers (nthcdr start workers))
      (dolist (w workers)
      (when (>= sampled +sampled-workers+)
        (return))
      ;; A worker waiting for a lock is left out: neither computing nor
      ;; waiting on the world.
      (when (and (worker-busy w) (>= (worker-stat w) 0) (not (worker-on-lock w)))
        (incf sampled)
        (when (%sleeping-p (worker-stat w))
          (incf waiting)))))
    (and (plusp sampled) (>= (* 2 waiting) sampled))))

(defun %workers-waiting-outside-gc-p (executor)
  "PARK-LOCK held: %WORKERS-WAITING-P, unless a garbage collection ran while
the workers were sampled: threads stopped for one look asleep too."
  (let ((gc sb-ext:*gc-run-time*))
    (and (%workers-waiting-p executor)
         (= gc sb-ext:*gc-run-time*))))

(defun %workers-wanted (executor cpus now)
  "PARK-LOCK held: how many workers to start now.  CPUS is what the last
tick saw of them: :IDLE, :BUSY, or :UNKNOWN (the first tick, a tick after
one that did not read the process's CPU clock, or a garbage collection
ran, which stops every thread)."
  (let ((threads (executor-threads executor))
        (queued (executor-queued-count executor)))
    (declare (type fixnum threads queued))
    (cond ((or (zerop queued) (plusp (executor-idle executor))
               (plusp (executor-spinning executor)))
           0)
          ((< threads (executor-min-threads executor))
           (min queued (- (executor-min-threads executor) threads)))
          ;; Tasks wait for turns (the heap is full): more workers would
          ;; only wait too.
          ((plusp (executor-turn-waiters executor)) 0)
          ((or (>= threads (executor-max-threads executor))
               (< (%oldest-wait-us executor now) (executor-grow-after-us executor)))
           0)
          ;; Nothing decided: the ticks of a streak are in a row.
          ((eq cpus :unknown)
           (setf (executor-waiting-streak executor) 0))
          ;; Workers that compute, or wait for a CPU: more of them would
          ;; only share the CPUs.
          ((not (%workers-waiting-outside-gc-p executor))
           (setf (executor-waiting-streak executor) 0))
          ;; Workers that wait (sleep, I/O) while the CPUs have room: half
          ;; as many again, or, while the heap is crowded, one: each
          ;; handler holds what it builds, so no more run at once than keep
          ;; the CPUs busy.
          ((eq cpus :idle)
           (setf (executor-waiting-streak executor) 0)
           (if (%heap-crowded-p executor)
               1
               (min queued (max 1 (ash threads -1)) (- (executor-max-threads executor) threads))))
          ;; ... and while they are busy, one every +CROWDED-GROW-AFTER-US+
          ;; at most, so that workers blocked for long never hold the
          ;; queue for ever.
          ((%heap-crowded-p executor)
           (cond ((>= (- now (executor-crowded-grown-us executor)) +crowded-grow-after-us+)
                  (setf (executor-crowded-grown-us executor) now)
                  1)
                 (t 0)))
          ;; ... and while they are busy: an eighth, after two ticks.
          ((< (incf (executor-waiting-streak executor)) 2) 0)
          (t (min queued (max 1 (ash threads -3)) (- (executor-max-threads executor) threads))))))

(defun %could-grow-p (executor)
  "Whether the pool could grow now (%WORKERS-WANTED): tasks wait, no worker
is parked, woken, spinning or waiting for a turn, and it is below
MAX-THREADS (read without the lock: an estimate)."
  (and (%queued-p executor)
       (zerop (executor-idle executor))
       (zerop (executor-spinning executor))
       (zerop (executor-turn-waiters executor))
       (< (executor-threads executor) (executor-max-threads executor))))

(defun %monitor-tick (executor cpus)
  "Start the workers wanted now; true if tasks are waiting."
  (let ((n 0))
    (declare (type fixnum n))
    (with-park-lock-then-notify (executor)
      (setf n (%workers-wanted executor cpus (now-us)))
      (incf (executor-threads executor) n)
      ;; A task no worker is about to take (a wake-up was missed): wake
      ;; a parked worker for it.
      (and (%unclaimed-p executor) (%wake-parked executor)))
    (when (plusp n)
      (%start-workers executor n))
    (%queued-p executor)))

(defun monitor-loop (executor)
  (let ((lock (executor-park-lock executor)))
    (loop
      (sb-thread:with-mutex (lock)
        (loop until (or (executor-monitor-awake executor) (executor-shutdown executor))
              do (sb-thread:condition-wait (executor-monitor-cv executor) lock))
        (when (executor-shutdown executor)
          (return)))
      (let ((idle-ticks 0)
            ;; The process's CPU time and the clock at the end of the last
            ;; tick (CPU -1: not read then).
            (cpu -1)
            (wall 0)
            (gc sb-ext:*gc-run-time*)
            (cpus :unknown))
        (declare (type fixnum idle-ticks cpu wall))
        (loop
          (if (handler-case (%monitor-tick executor cpus)
                (serious-condition (e)
                  (log-line "executor monitor: ~A" e)
                  nil))
              (setf idle-ticks 0)
              (incf idle-ticks))
          (when (executor-shutdown executor)
            (return))
          (when (>= idle-ticks +monitor-idle-ticks+)
            (sb-thread:with-mutex (lock)
              (setf (executor-monitor-awake executor) nil)
              (unless (%queued-p executor)
                (return))
              (setf (executor-monitor-awake executor) t)))
          (sleep (/ +tick-us+ 1d6))
          ;; The CPUs were busy if the process used all of them but a
          ;; quarter over the tick.  The process's CPU time is the sum of
          ;; every thread's, which the kernel adds up on each reading (with
          ;; a thousand handlers blocked, a few percent of the server's
          ;; CPU), so it is read only while the pool could grow.
          (if (%could-grow-p executor)
              (let ((cpu-now (process-cpu-us))
                    (wall-now (now-us))
                    (gc-now sb-ext:*gc-run-time*))
                (declare (type fixnum cpu-now wall-now))
                (setf cpus (cond ((or (minusp cpu) (/= gc gc-now)) :unknown)
                                 ((>= (* 4 (- cpu-now cpu))
                                      (* (- (* 4 (executor-cpus executor)) 1) (max 1 (- wall-now wall))))
                                  :busy)
                                 (t :idle))
                      cpu cpu-now
                      wall wall-now
                      gc gc-now))
              (setf cpu -1
                    cpus :unknown)))))))

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
