;;;; CPU placement, as go/routeguide/loadgen's -cpus: the server on one set
;;;; of CPUs and this load generator on another, so that what each side
;;;; costs is its own and neither steals the other's cores.  A process
;;;; started by a thread inherits that thread's CPUs, so the server is
;;;; started from a thread bound to the server's set, and its runtime sizes
;;;; its threads to them from the start.

(in-package #:routeguide)

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
  (let ((cpus (loop for part in (split-on #\, text)
                    for dash = (position #\- part)
                    for first = (ignore-errors (parse-integer part :end dash))
                    for last = (if dash (ignore-errors (parse-integer part :start (1+ dash))) first)
                    unless (and first last (<= 0 first last) (< last (* 8 +cpu-mask-octets+)))
                      do (return-from parse-cpu-list nil)
                    append (loop for c from first to last collect c))))
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

(defun parse-cpus-flag (text)
  "-cpus: :auto, :off, or (server-cpus . client-cpus); NIL if invalid."
  (cond ((string= text "auto") :auto)
        ((string= text "off") :off)
        (t (let* ((slash (position #\/ text))
                  (server (and slash (parse-cpu-list (subseq text 0 slash))))
                  (client (and slash (parse-cpu-list (subseq text (1+ slash))))))
             (and server client (not (intersection server client)) (cons server client))))))

(defun cpu-placement (cpus-flag server-path)
  "(values server-cpus client-cpus why-unpinned) for the -cpus value and
-server: auto gives the server the first half of the usable CPUs, rounded
down, and this process the rest, when there are two or more and the
server is ours to start."
  (let ((spec (parse-cpus-flag cpus-flag)))
    (cond ((eq spec :off) (values nil nil "-cpus off"))
          ((null server-path) (values nil nil "the server runs elsewhere (-addr)"))
          ((consp spec) (values (car spec) (cdr spec) nil))
          (t (let ((usable (usable-cpus)))
               (if (< (length usable) 2)
                   (values nil nil (format nil "one usable CPU (~A)" (format-cpu-list usable)))
                   (let ((half (floor (length usable) 2)))
                     (values (subseq usable 0 half) (subseq usable half) nil))))))))

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

(defun call-with-thread-cpus (cpus function)
  "Call FUNCTION on this thread bound to CPUS (when not NIL), then restore
the thread's CPUs, so that a process FUNCTION starts runs on CPUS."
  (if (null cpus)
      (funcall function)
      (let ((old (usable-cpus)))
        (unless (set-thread-cpus cpus)
          (error "cannot bind a thread to CPUs ~A" (format-cpu-list cpus)))
        (unwind-protect (funcall function)
          (set-thread-cpus old)))))
