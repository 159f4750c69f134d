;;;; The executor's workers: how a worker takes a task, spins for work,
;;;; parks and wakes another (the pool itself: executor.lisp).
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
;;;; calls start together, past what the heap limits (executor-monitor.lisp,
;;;; executor-turns.lisp) could slow.)  A worker that runs out of work
;;;; spins briefly (one at a time, and only with more than one CPU) before
;;;; it parks, so under load the next batch usually finds a worker awake.
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

(in-package #:clgrpc.util)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +spin-us+ 50
  "How long a worker that ran out of work looks for more before it parks,
while spinning pays (SPIN-CREDIT).")
(defconstant +short-spin-us+ 3
  "How long it looks while spinning has not paid lately: under light load
work arrives far apart, and a long spin would burn a CPU per call.")
(defconstant +spin-credit-max+ 8)

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

