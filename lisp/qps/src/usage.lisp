;;;; What a worker reports of itself: wall time on the monotonic clock, its
;;;; process's user and system CPU time (getrusage), and the host's CPU
;;;; counters from /proc/stat, measured since the last mark with reset.

(in-package #:qps)

(defun monotonic-seconds ()
  (multiple-value-bind (seconds nanoseconds) (sb-unix::clock-gettime 1) ; CLOCK_MONOTONIC
    (+ seconds (/ nanoseconds 1d9))))

(defun process-cpu-seconds ()
  "(values user system): this process's CPU time in seconds, all threads."
  (multiple-value-bind (ok user-us system-us) (sb-unix:unix-getrusage sb-unix:rusage_self)
    (declare (ignore ok))
    (values (/ user-us 1d6) (/ system-us 1d6))))

(defun host-cpu-ticks ()
  "(values total idle): the host's CPU time in clock ticks from the first
line of /proc/stat, all CPUs, as gRPC's C++ worker reads it; (values 0 0)
where there is no /proc/stat."
  (let ((line (ignore-errors (with-open-file (in "/proc/stat") (read-line in)))))
    (if (and line (> (length line) 4) (string= "cpu " line :end2 4))
        (let ((fields (with-input-from-string (in line :start 4)
                        (loop for n = (read in nil) while (integerp n) collect n))))
          (values (reduce #'+ fields) (or (nth 3 fields) 0)))
        (values 0 0))))

(defstruct (usage-mark (:constructor %make-usage-mark))
  (wall 0d0 :type double-float)
  (user 0d0 :type double-float)
  (system 0d0 :type double-float)
  (host-total 0 :type integer)
  (host-idle 0 :type integer))

(defun make-usage-mark ()
  "The counters now."
  (multiple-value-bind (user system) (process-cpu-seconds)
    (multiple-value-bind (total idle) (host-cpu-ticks)
      (%make-usage-mark :wall (monotonic-seconds) :user user :system system
                        :host-total total :host-idle idle))))

(defun usage-since (mark &optional (now (make-usage-mark)))
  "(values elapsed user system host-total host-idle) between MARK and NOW."
  (values (- (usage-mark-wall now) (usage-mark-wall mark))
          (- (usage-mark-user now) (usage-mark-user mark))
          (- (usage-mark-system now) (usage-mark-system mark))
          (max 0 (- (usage-mark-host-total now) (usage-mark-host-total mark)))
          (max 0 (- (usage-mark-host-idle now) (usage-mark-host-idle mark)))))
