;;;; A monotonic microsecond clock and condition waits with absolute deadlines.
;;;;
;;;; Deadlines everywhere (gRPC timeouts, idle workers, the scheduler) are
;;;; absolute fixnum microseconds from NOW-US, so comparing them never conses
;;;; and a wait that wakes up early just waits again for what is left.

(in-package #:clgrpc.util)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

;;; Not GET-INTERNAL-REAL-TIME: on Linux SBCL reads CLOCK_MONOTONIC_COARSE
;;; for it, which advances in 4 ms steps, too coarse for gRPC deadlines
;;; (a 1 ms timeout must expire) and for latency measurements.
;;; SB-UNIX::CLOCK-GETTIME is SBCL's own allocation-free clock_gettime(2).
(defconstant +clock-monotonic+ 1 "CLOCK_MONOTONIC on Linux (every architecture).")

(declaim (inline now-us))
(defun now-us ()
  "Microseconds on a monotonic clock (an arbitrary origin)."
  (multiple-value-bind (seconds nanoseconds) (sb-unix::clock-gettime +clock-monotonic+)
    (declare (type (unsigned-byte 40) seconds) (type (integer 0 999999999) nanoseconds))
    (the fixnum (+ (* seconds 1000000) (floor nanoseconds 1000)))))

(defun wait-on (queue mutex &optional deadline-us)
  "Wait on QUEUE (MUTEX held) until notified or DEADLINE-US (NIL: no limit).
Unlike SB-THREAD:CONDITION-WAIT, always returns with MUTEX held, also after a
timeout.  Returns NIL when the deadline has passed, T otherwise; wakeups may
be spurious, so callers loop on their own predicate."
  (declare (type (or null fixnum) deadline-us))
  (if (null deadline-us)
      (progn (sb-thread:condition-wait queue mutex) t)
      (let ((remaining (- deadline-us (now-us))))
        (cond ((<= remaining 0) nil)
              ((sb-thread:condition-wait queue mutex :timeout (/ remaining 1d6)) t)
              (t (unless (sb-thread:holding-mutex-p mutex)
                   (sb-thread:grab-mutex mutex))
                 nil)))))

;;; SB-THREAD:CONDITION-BROADCAST and -NOTIFY make a futex system call even
;;; when nobody waits, and the profile (PERFORMANCE.md) had them among the
;;; server's top costs: a call's or connection's wait queue is signalled on
;;; every message, flush and WINDOW_UPDATE, but rarely has a waiter.  Places
;;; that signal often count their waiters (under the same mutex as the wait)
;;; and signal only when there are some.

(defmacro counted-wait ((waiters-place) &body wait-forms)
  "Run WAIT-FORMS (a condition wait, mutex held) with WAITERS-PLACE, a fixnum
place guarded by that mutex, counting this thread as a waiter.  Returns the
value of WAIT-FORMS.  A wait that unwinds (the thread is being destroyed) may
not hold the mutex, so the count is then left too high, which costs only a
needless signal, never a lost wake-up."
  `(progn
     (incf ,waiters-place)
     (multiple-value-prog1 (progn ,@wait-forms)
       (decf ,waiters-place))))

(defmacro broadcast-if-waiting (waiters-form queue-form)
  "CONDITION-BROADCAST QUEUE-FORM only if WAITERS-FORM is positive (mutex held)."
  `(when (plusp (the fixnum ,waiters-form))
     (sb-thread:condition-broadcast ,queue-form)))
