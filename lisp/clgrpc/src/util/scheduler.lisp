;;;; Deadline timers: one scheduler thread per process and a binary heap.
;;;;
;;;; Every RPC with a deadline schedules a timer and cancels it when it
;;;; completes, so both are O(log n) and cons only the timer itself; the heap
;;;; holds just the calls in flight because cancelled timers are removed at
;;;; once, not left to expire.  The scheduler thread sleeps until the earliest
;;;; deadline it knows of, and is woken only for a timer due before that.
;;;; When that timer is cancelled, the thread still wakes at its deadline
;;;; rather than being woken to sleep longer: so calls that each end before
;;;; the next begins, with the heap empty in between, wake it about once per
;;;; timeout instead of once per call (a wake-up is a futex call each side
;;;; and a contended lock).  Callbacks run on the scheduler thread and must
;;;; be short and never block.
;;;;
;;;; SBCL's own SB-EXT:TIMER is not used: it is built on signals and would
;;;; interrupt arbitrary threads, or start a thread per firing.

(in-package #:clgrpc.util)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defstruct (timer (:constructor %make-timer (deadline function argument)))
  (deadline 0 :type fixnum)
  (index -1 :type fixnum)               ; position in the heap, -1 when not in it
  (function nil :type (or null function))
  (argument nil))

(defstruct (scheduler (:constructor %make-scheduler))
  (lock (sb-thread:make-mutex :name "clgrpc scheduler") :type sb-thread:mutex)
  (cv (sb-thread:make-waitqueue) :type sb-thread:waitqueue)
  (heap (make-array 256 :initial-element nil) :type simple-vector)
  (count 0 :type fixnum)
  ;; When the scheduler thread will next look at the heap by itself.
  (wake-at most-positive-fixnum :type fixnum)
  (thread nil))

(defvar *scheduler* nil)
(defvar *scheduler-init-lock* (sb-thread:make-mutex :name "clgrpc scheduler init"))

(declaim (inline heap-less))
(defun heap-less (a b)
  (< (timer-deadline a) (timer-deadline b)))

(defun heap-place (heap i timer)
  (declare (type simple-vector heap) (type fixnum i) (type timer timer))
  (setf (svref heap i) timer
        (timer-index timer) i))

(defun sift-up (s i)
  (declare (type scheduler s) (type fixnum i))
  (let* ((heap (scheduler-heap s))
         (timer (svref heap i)))
    (loop while (> i 0)
          do (let* ((parent (ash (1- i) -1))
                    (p (svref heap parent)))
               (if (heap-less timer p)
                   (progn (heap-place heap i p) (setf i parent))
                   (return))))
    (heap-place heap i timer)))

(defun sift-down (s i)
  (declare (type scheduler s) (type fixnum i))
  (let* ((heap (scheduler-heap s))
         (n (scheduler-count s))
         (timer (svref heap i)))
    (loop
      (let* ((left (1+ (* 2 i)))
             (right (1+ left))
             (smallest i)
             (small-timer timer))
        (declare (type fixnum left right smallest))
        (when (and (< left n) (heap-less (svref heap left) small-timer))
          (setf smallest left small-timer (svref heap left)))
        (when (and (< right n) (heap-less (svref heap right) small-timer))
          (setf smallest right small-timer (svref heap right)))
        (when (= smallest i)
          (return))
        (heap-place heap i small-timer)
        (setf i smallest)))
    (heap-place heap i timer)))

(defun heap-remove (s i)
  "Remove the timer at heap position I."
  (declare (type scheduler s) (type fixnum i))
  (let* ((heap (scheduler-heap s))
         (last (1- (scheduler-count s)))
         (removed (svref heap i)))
    (setf (timer-index removed) -1)
    (setf (scheduler-count s) last)
    (if (= i last)
        (setf (svref heap last) nil)
        (let ((moved (svref heap last)))
          (setf (svref heap last) nil)
          (heap-place heap i moved)
          (sift-down s i)
          (sift-up s (timer-index moved))))
    removed))

(defun scheduler-loop (s)
  (declare (type scheduler s))
  (let ((lock (scheduler-lock s)))
    (loop
      (let ((due nil))
        (sb-thread:with-mutex (lock)
          (loop
            (let ((now (now-us)))
              (cond ((< now (scheduler-wake-at s))
                     ;; Sleep on until the time set, or until a timer due
                     ;; earlier wakes this thread and lowers it.
                     (wait-on (scheduler-cv s) lock
                              (and (< (scheduler-wake-at s) most-positive-fixnum)
                                   (scheduler-wake-at s))))
                    ((zerop (scheduler-count s))
                     (setf (scheduler-wake-at s) most-positive-fixnum))
                    (t
                     (let ((top (svref (scheduler-heap s) 0)))
                       (if (<= (timer-deadline top) now)
                           (progn (setf due (heap-remove s 0))
                                  (return))
                           (setf (scheduler-wake-at s) (timer-deadline top)))))))))
        (let ((fn (timer-function due)))
          (when fn
            (handler-case (funcall fn (timer-argument due))
              (serious-condition () nil))))))))

(defun ensure-scheduler ()
  ;; Started on first use, never at load time: a saved executable must not
  ;; have threads running when it is saved.
  (or *scheduler*
      (sb-thread:with-mutex (*scheduler-init-lock*)
        (or *scheduler*
            (let ((s (%make-scheduler)))
              (setf (scheduler-thread s)
                    (sb-thread:make-thread #'scheduler-loop :name "clgrpc scheduler"
                                                            :arguments (list s)))
              (setf *scheduler* s))))))

(defun schedule-timer (function argument deadline-us)
  "Call (FUNCTION ARGUMENT) on the scheduler thread at DEADLINE-US (NOW-US
time).  Returns the timer, for CANCEL-TIMER."
  (declare (type function function) (type fixnum deadline-us))
  (let ((s (ensure-scheduler))
        (timer (%make-timer deadline-us function argument)))
    (sb-thread:with-mutex ((scheduler-lock s))
      (let ((n (scheduler-count s)))
        (when (= n (length (scheduler-heap s)))
          (let ((new (make-array (* 2 n) :initial-element nil)))
            (replace new (scheduler-heap s))
            (setf (scheduler-heap s) new)))
        (heap-place (scheduler-heap s) n timer)
        (setf (scheduler-count s) (1+ n))
        (sift-up s n)
        (when (< deadline-us (scheduler-wake-at s))
          (setf (scheduler-wake-at s) deadline-us)
          (sb-thread:condition-notify (scheduler-cv s)))))
    timer))

(defun timer-pending-p (timer)
  "True while TIMER waits to fire: neither fired nor cancelled.  A callback
that finds its owner holding a pending timer is a stale firing."
  (declare (type timer timer))
  (>= (timer-index timer) 0))

(defun cancel-timer (timer)
  "Unschedule TIMER.  Returns true if it had not fired yet."
  (declare (type timer timer))
  (let ((s *scheduler*))
    (when s
      (sb-thread:with-mutex ((scheduler-lock s))
        (let ((i (timer-index timer)))
          (when (>= i 0)
            (heap-remove s i)
            t))))))
