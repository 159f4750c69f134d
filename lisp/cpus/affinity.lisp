;;;; CPU affinity through sched_getaffinity(2) and sched_setaffinity(2):
;;;; which CPUs a thread may run on, binding one thread or a whole process
;;;; to a set, and the kernel's CPU-list notation ("0-3,6").  Benchmarks
;;;; use it to keep a server and its load on CPUs of their own, and the qps
;;;; worker to honour a scenario's core_list and core_limit.

(in-package #:cpus)

(defconstant +cpu-mask-octets+ 128 "A cpu_set_t: up to 1024 CPUs.")

(defun %affinity-call (operation tid cpus)
  "Call sched_getaffinity (OPERATION :get) or sched_setaffinity (:set) for
thread TID (0: this one) with a mask of CPUS; returns the CPUs of the mask
afterwards, or NIL when the call failed."
  (let ((mask (make-array +cpu-mask-octets+ :element-type '(unsigned-byte 8) :initial-element 0)))
    (dolist (c cpus)
      (setf (ldb (byte 1 (mod c 8)) (aref mask (floor c 8))) 1))
    (sb-sys:with-pinned-objects (mask)
      (macrolet ((call (name)
                   `(sb-alien:alien-funcall
                     (sb-alien:extern-alien ,name (function sb-alien:int sb-alien:int sb-alien:unsigned-long
                                                            sb-sys:system-area-pointer))
                     tid +cpu-mask-octets+ (sb-sys:vector-sap mask))))
        (when (zerop (ecase operation
                       (:get (call "sched_getaffinity"))
                       (:set (call "sched_setaffinity"))))
          (loop for c below (* 8 +cpu-mask-octets+)
                when (logbitp (mod c 8) (aref mask (floor c 8))) collect c))))))

(defun usable-cpus ()
  "The CPUs this thread may run on."
  (%affinity-call :get 0 '()))

(defun set-thread-cpus (cpus &optional (tid 0))
  "Bind thread TID (0: this one) to CPUS; true on success."
  (and (%affinity-call :set tid cpus) t))

(defun parse-cpu-list (text)
  "The CPUs of a kernel CPU list (\"0\", \"0-3\", \"0,2-3\"), sorted, or NIL
if TEXT is not one."
  (let ((cpus (loop for start = 0 then (1+ comma)
                    for comma = (position #\, text :start start)
                    for part = (subseq text start comma)
                    for dash = (position #\- part)
                    for first = (ignore-errors (parse-integer part :end dash))
                    for last = (if dash (ignore-errors (parse-integer part :start (1+ dash))) first)
                    unless (and first last (<= 0 first last) (< last (* 8 +cpu-mask-octets+)))
                      do (return-from parse-cpu-list nil)
                    append (loop for c from first to last collect c)
                    until (null comma))))
    (and cpus (= (length cpus) (length (remove-duplicates cpus))) (sort cpus #'<))))

(defun format-cpu-list (cpus)
  "CPUS as a kernel CPU list, ranges collapsed: \"0-2,5\"."
  (with-output-to-string (out)
    (loop with rest = cpus
          for first = (pop rest)
          while first
          do (let ((last first))
               (loop while (and rest (= (first rest) (1+ last))) do (setf last (pop rest)))
               (format out "~:[,~;~]~D~:[-~D~;~]" (= first (first cpus)) first (= first last) last)))))

(defun pin-process (cpus)
  "Bind every thread of this process to CPUS; threads made later inherit it
from the thread that makes them.  Repeats until a pass over
/proc/self/task finds no thread it has not bound.  True on success."
  (when (set-thread-cpus cpus)
    (let ((done '()))
      (loop
        (let ((new (loop for dir in (directory "/proc/self/task/*/" :resolve-symlinks nil)
                         for tid = (ignore-errors (parse-integer (car (last (pathname-directory dir)))))
                         when (and tid (not (member tid done))) collect tid)))
          (when (null new) (return t))
          (dolist (tid new)
            ;; Another thread may have ended meanwhile: its failure is no failure.
            (set-thread-cpus cpus tid)
            (push tid done)))))))
