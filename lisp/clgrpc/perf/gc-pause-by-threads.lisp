;;;; How long one of SBCL's garbage collections stops the process, by the
;;;; number of other threads alive and waiting (as parked executor workers
;;;; and handlers blocked on I/O wait): every collection stops each thread
;;;; and scans its stack, so a pool grown for blocking handlers makes every
;;;; pause longer.  Needs nothing but SBCL:
;;;;
;;;;   sbcl --script lisp/clgrpc/perf/gc-pause-by-threads.lisp
;;;;   taskset -c 0 sbcl --script lisp/clgrpc/perf/gc-pause-by-threads.lisp   # one CPU
;;;;
;;;; For 0 to 1,000 threads waiting on a semaphore, it prints the median of
;;;; seven collections of the youngest generation (SB-EXT:GC), in
;;;; microseconds, and what each thread adds to it: the median less the one
;;;; with no thread waiting, over the threads.

(defun now-us ()
  (multiple-value-bind (seconds nanoseconds) (sb-unix::clock-gettime 1) ; CLOCK_MONOTONIC
    (+ (* seconds 1000000) (floor nanoseconds 1000))))

(defun collection-us ()
  (let ((start (now-us)))
    (sb-ext:gc)
    (- (now-us) start)))

(defun median-collection-us ()
  (collection-us)
  (nth 3 (sort (loop repeat 7 collect (collection-us)) #'<)))

(format t "| waiting threads | collection (µs, median of 7) | added per thread (µs) |~%|---|---|---|~%")
(let ((alone nil))
  (dolist (n '(0 10 100 250 500 1000))
    (let* ((gate (sb-thread:make-semaphore))
           (threads (loop repeat n
                          collect (sb-thread:make-thread
                                   (lambda () (sb-thread:wait-on-semaphore gate))))))
      (sleep 0.5)
      (let ((median (median-collection-us)))
        (unless alone
          (setf alone median))
        (format t "| ~D | ~D | ~A |~%" n median
                (if (zerop n) "—" (format nil "~,1F" (/ (- median alone) n)))))
      (when (plusp n)
        (sb-thread:signal-semaphore gate n))
      (mapc #'sb-thread:join-thread threads))))
