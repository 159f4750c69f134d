;;;; How long one of SBCL's garbage collections stops the process, by the
;;;; number of other threads alive and waiting (as parked executor workers
;;;; and handlers blocked in a sleep wait): every collection stops each
;;;; thread and scans its stack, so a pool grown for blocking handlers makes
;;;; every pause longer.  Needs nothing but SBCL:
;;;;
;;;;   sbcl --script lisp/clgrpc/perf/gc-pause-by-threads.lisp
;;;;   taskset -c 0 sbcl --script lisp/clgrpc/perf/gc-pause-by-threads.lisp   # one CPU
;;;;
;;;; It prints, for 0 to 1,000 waiting threads, the median of seven
;;;; collections (SB-EXT:GC, the nursery only) in microseconds, and that
;;;; median over the threads.

(defun now-us ()
  (multiple-value-bind (seconds nanoseconds) (sb-unix::clock-gettime 1) ; CLOCK_MONOTONIC
    (+ (* seconds 1000000) (floor nanoseconds 1000))))

(defun collection-us ()
  (let ((start (now-us)))
    (sb-ext:gc)
    (- (now-us) start)))

(format t "| waiting threads | collection (µs, median of 7) | per thread (µs) |~%|---|---|---|~%")
(dolist (n '(0 10 100 250 500 1000))
  (let* ((stop nil)
         (threads (loop repeat n
                        collect (sb-thread:make-thread
                                 (lambda () (loop until stop do (sleep 0.05)))))))
    (sleep 0.5)
    (collection-us)
    (let ((median (nth 3 (sort (loop repeat 7 collect (collection-us)) #'<))))
      (format t "| ~D | ~D | ~A |~%" n median
              (if (zerop n) "—" (format nil "~,1F" (/ median n)))))
    (setf stop t)
    (mapc #'sb-thread:join-thread threads)))
