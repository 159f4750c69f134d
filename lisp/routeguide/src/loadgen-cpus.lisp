;;;; CPU placement, as go/routeguide/loadgen's -cpus: the server on one set
;;;; of CPUs and this load generator on another, so that what each side
;;;; costs is its own and neither steals the other's cores.  A process
;;;; started by a thread inherits that thread's CPUs, so the server is
;;;; started from a thread bound to the server's set, and its runtime sizes
;;;; its threads to them from the start.

(in-package #:routeguide)

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
