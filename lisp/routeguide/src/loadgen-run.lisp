;;;; Measuring one scenario the way go/bench/harness does: N workers (one
;;;; per client) call the operation back to back for a fixed time, after an
;;;; unmeasured warm-up, for several repetitions.  Each repetition records
;;;; wall time, successful operations, errors (and the first one),
;;;; messages, every latency, the client's and the server's CPU time and
;;;; the bytes the client consed.  With a rate, the loop is open, as the
;;;; harness's Plan.Rate: requests are due on a fixed schedule and each
;;;; latency counts from when its request was due.

(in-package #:routeguide)

(declaim (inline now-ns))
(defun now-ns ()
  "Nanoseconds on the monotonic clock."
  (multiple-value-bind (seconds nanoseconds) (sb-unix::clock-gettime 1) ; CLOCK_MONOTONIC
    (+ (* seconds 1000000000) nanoseconds)))

(defstruct (rep (:constructor make-rep ()))
  (wall 0d0 :type double-float)         ; seconds
  (ops 0 :type integer)
  (errors 0 :type integer)
  (msgs 0 :type integer)
  (first-error nil)
  (client-cpu 0d0 :type double-float)   ; seconds
  (server-cpu nil)                      ; seconds, or NIL when unknown
  (bytes 0 :type integer)               ; consed by the client
  (cpu-pressure nil)                    ; share of WALL the host stalled, or NIL
  (latencies #() :type vector))         ; nanoseconds, sorted

(defstruct (worker (:constructor make-worker (id channel)))
  id channel
  (ops 0 :type fixnum) (errors 0 :type fixnum) (msgs 0 :type fixnum)
  (first-error nil) (first-error-at 0)
  (latencies (make-array 1024 :element-type 'fixnum :adjustable t :fill-pointer 0)))

(defun worker-reset (w)
  (setf (worker-ops w) 0 (worker-errors w) 0 (worker-msgs w) 0
        (worker-first-error w) nil (fill-pointer (worker-latencies w)) 0))

(defun next-due (schedule deadline-ns)
  "The due time of the next request of an open loop, SCHEDULE being
(next-index start-ns . interval-ns) shared by the workers, after waiting
until then; NIL once it falls at or after DEADLINE-NS."
  (let* ((n (sb-ext:atomic-incf (car schedule))) ; the index before the increment
         (due (+ (cadr schedule) (* n (cddr schedule)))))
    (when (< due deadline-ns)
      (let ((wait (- due (now-ns))))
        (when (plusp wait) (sleep (/ wait 1d9))))
      due)))

(defun worker-loop (w op workload deadline-ns tickets &optional schedule)
  "Call OP until DEADLINE-NS (NIL: none) or until TICKETS (a cons counter,
or NIL) runs out; with SCHEDULE (see NEXT-DUE), each call waits until it
is due, its latency counts from then, and calls due before the deadline
all run.  Errors are counted, never raised."
  (loop
    (when (and deadline-ns (not schedule) (>= (now-ns) deadline-ns)) (return))
    (when (and tickets (minusp (sb-ext:atomic-decf (car tickets)))) (return))
    (let ((start (if schedule
                     (or (next-due schedule deadline-ns) (return))
                     (now-ns))))
      (handler-case
          (let ((msgs (funcall op (worker-channel w) workload)))
            (vector-push-extend (- (now-ns) start) (worker-latencies w))
            (incf (worker-ops w))
            (incf (worker-msgs w) msgs))
        (error (e)
          (incf (worker-errors w))
          (unless (worker-first-error w)
            (setf (worker-first-error w) (princ-to-string e)
                  (worker-first-error-at w) (now-ns))))))))

(defun run-workers (workers op workload &key duration tickets rate)
  "Run every worker's loop in its own thread, released together; returns
the wall time in seconds.  RATE (requests/s in all, with DURATION) makes
the loop open."
  (let* ((gate (sb-thread:make-semaphore))
         (deadline (list nil))
         (schedule (and rate (list* 0 0 (round 1d9 rate))))
         (threads (loop for w in workers
                        collect (let ((w w))
                                  (sb-thread:make-thread
                                   (lambda ()
                                     (sb-thread:wait-on-semaphore gate)
                                     (worker-loop w op workload (car deadline) tickets schedule))
                                   :name "loadgen worker"))))
         (start (now-ns)))
    (when duration
      (setf (car deadline) (+ start (round (* duration 1000000000)))))
    (when schedule
      (setf (cadr schedule) start))
    (sb-thread:signal-semaphore gate (length workers))
    (mapc #'sb-thread:join-thread threads)
    (/ (- (now-ns) start) 1d9)))

(defun self-cpu-seconds ()
  (multiple-value-bind (ok user-us system-us) (sb-unix:unix-getrusage sb-unix:rusage_self)
    (declare (ignore ok))
    (/ (+ user-us system-us) 1d6)))

(defun process-cpu-seconds (pid)
  "User plus system CPU seconds of process PID, from /proc (NIL if gone).
/proc counts clock ticks, 100 per second on Linux."
  (let ((stat (ignore-errors
               (with-open-file (in (format nil "/proc/~D/stat" pid)) (read-line in)))))
    (when stat
      ;; The fields after the command name, which is in parentheses and
      ;; may contain spaces: state is field 3, utime 14 and stime 15.
      (let ((fields (split-spaces (subseq stat (+ 2 (position #\) stat :from-end t))))))
        (/ (+ (parse-integer (nth 11 fields)) (parse-integer (nth 12 fields))) 100d0)))))

(defun split-spaces (string)
  (loop with start = 0
        for space = (position #\Space string :start start)
        collect (subseq string start space)
        while space
        do (setf start (1+ space))))

(defun cpu-stall-seconds ()
  "The host's cumulative CPU stall time (the \"some\" total of Linux PSI,
/proc/pressure/cpu), or NIL where the kernel does not report it: as the Go
harness reads it, so that results say whether other work took the cores."
  (let ((line (ignore-errors
               (with-open-file (in "/proc/pressure/cpu")
                 (loop for l = (read-line in nil) while l
                       when (and (> (length l) 5) (string= "some " l :end2 5)) return l)))))
    (let ((at (and line (search "total=" line))))
      (when at
        (let ((us (parse-integer line :start (+ at 6) :junk-allowed t)))
          (and us (/ us 1d6)))))))

(defun measure-rep (workers op workload duration server-pid rate)
  (mapc #'worker-reset workers)
  (sb-ext:gc)
  (let* ((rep (make-rep))
         (bytes0 (sb-ext:get-bytes-consed))
         (client0 (self-cpu-seconds))
         (server0 (and server-pid (process-cpu-seconds server-pid)))
         (stall0 (cpu-stall-seconds))
         (wall (run-workers workers op workload :duration duration :rate rate))
         (stall1 (cpu-stall-seconds))
         (server1 (and server-pid (process-cpu-seconds server-pid))))
    (setf (rep-wall rep) wall
          (rep-client-cpu rep) (- (self-cpu-seconds) client0)
          (rep-server-cpu rep) (and server0 server1 (- server1 server0))
          (rep-bytes rep) (- (sb-ext:get-bytes-consed) bytes0)
          (rep-cpu-pressure rep) (and stall0 stall1 (plusp wall) (/ (- stall1 stall0) wall)))
    (let ((first-at nil))
      (dolist (w workers)
        (incf (rep-ops rep) (worker-ops w))
        (incf (rep-errors rep) (worker-errors w))
        (incf (rep-msgs rep) (worker-msgs w))
        (when (and (worker-first-error w)
                   (or (null first-at) (< (worker-first-error-at w) first-at)))
          (setf (rep-first-error rep) (worker-first-error w)
                first-at (worker-first-error-at w)))))
    (setf (rep-latencies rep)
          (sort (apply #'concatenate '(vector fixnum) (mapcar #'worker-latencies workers)) #'<))
    rep))

(defun open-channels (host port clients mode)
  "One channel per client (per-client) or one shared by all (shared);
connected before measuring, so no repetition pays for a handshake."
  (let ((channels (if (string= mode "shared")
                      (make-list clients :initial-element (clgrpc.grpc:make-channel host port))
                      (loop repeat clients collect (clgrpc.grpc:make-channel host port)))))
    (dolist (ch (remove-duplicates channels))
      ;; A round trip to an unknown method connects without touching the
      ;; service; a server that is not there shows up as errors later.
      (ignore-errors (clgrpc.grpc:unary-call ch "/routeguide.RouteGuide/Connect"
                                             (clgrpc.octets:octets-of) :timeout 10)))
    channels))

(defstruct (cell (:constructor %make-cell (channels workers op)))
  "One scenario's clients, connected to one server and kept from one
repetition to the next: measured in turns with another server's, its
repetitions are taken a few at a time."
  channels workers op (warmed nil))

(defun open-cell (&key host port kind clients mode)
  (let ((channels (open-channels host port clients mode)))
    (%make-cell channels (loop for ch in channels for i from 0 collect (make-worker i ch))
                (operation kind))))

(defun close-cell (cell)
  (mapc #'clgrpc.grpc:channel-close (remove-duplicates (cell-channels cell))))

(defun cell-reps (cell &key label workload duration reps warmup server-pid progress rate)
  "REPS more repetitions of CELL (a list of REP), after its warm-up if none
has run yet.  WARMUP is seconds, an operation count (an integer), or NIL;
LABEL names the scenario in progress lines."
  (let ((workers (cell-workers cell)) (op (cell-op cell)))
    (unless (cell-warmed cell)
      (setf (cell-warmed cell) t)
      (cond ((integerp warmup)
             (run-workers workers op workload :tickets (list warmup)))
            ((and warmup (plusp warmup))
             (run-workers workers op workload :duration warmup))))
    (loop for i from 1 to reps
          collect (let ((rep (measure-rep workers op workload duration server-pid rate)))
                    (when progress
                      (format progress "[routeguide] ~A rep ~D/~D: ~D req/s~@[, ~D msg/s~], p99 ~A, ~D errors~%"
                              label i reps (round (rep-ops rep) (rep-wall rep))
                              (and (> (rep-msgs rep) (rep-ops rep)) (round (rep-msgs rep) (rep-wall rep)))
                              (format-ns (percentile (rep-latencies rep) 99)) (rep-errors rep))
                      (finish-output progress))
                    rep))))

(defun percentile (sorted p)
  "The smallest latency that P percent of SORTED are at or below (0 if none)."
  (let ((n (length sorted)))
    (if (zerop n)
        0
        (aref sorted (max 0 (1- (ceiling (* p n) 100)))))))

(defun format-ns (ns)
  "A latency for the progress lines: 950ns, 812.3us, 1.2ms, 3.00s."
  (cond ((< ns 1000) (format nil "~Dns" ns))
        ((< ns 1000000) (format nil "~,1Fus" (/ ns 1d3)))
        ((< ns 1000000000) (format nil "~,1Fms" (/ ns 1d6)))
        (t (format nil "~,2Fs" (/ ns 1d9)))))
