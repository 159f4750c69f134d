;;;; The executor's monitor: when the pool of workers grows.
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
;;;; them at once.  Reactors never create threads: only the monitor does
;;;; (%START-WORKERS).

(in-package #:clgrpc.util)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +tick-us+ 1000 "How often the monitor looks while tasks wait.")
(defconstant +monitor-idle-ticks+ 10
  "Ticks with nothing waiting after which the monitor sleeps until woken.")
(defconstant +clock-process-cputime+ 2 "CLOCK_PROCESS_CPUTIME_ID on Linux.")
(defconstant +crowded-grow-after-us+ 100000
  "While the heap is crowded and the CPUs busy, how often the pool may grow
by one worker.")
(defconstant +sampled-workers+ 8
  "Busy workers whose CPU clocks the monitor reads per tick, at most.")

(declaim (ftype function %wake-parked worker-loop))

(defun %heap-crowded-p (executor)
  (> (sb-kernel:dynamic-usage) (executor-heap-limit executor)))

(defun %wake-monitor (executor)
  "PARK-LOCK held: have the monitor look now."
  (unless (executor-monitor-awake executor)
    (setf (executor-monitor-awake executor) t)
    (sb-thread:condition-notify (executor-monitor-cv executor))))

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
