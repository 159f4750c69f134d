;;;; Running one scenario's calls: N workers (one per client) call the
;;;; operation back to back for a fixed time, or, with a rate, on a fixed
;;;; schedule (an open loop, each latency counted from when its call was
;;;; due).  A repetition returns raw readings only: wall time, successful
;;;; and failed calls and the first failure, messages, this process's CPU
;;;; time and bytes consed, and the latencies of the successful calls in a
;;;; log-bucket histogram.  The Go harness that drives this program turns
;;;; them into results, as it does its own client's.

(in-package #:routeguide)

(defparameter *latency-resolution* 1/1000
  "Relative width of a latency bucket: 0.1%, the precision of the Go
client's HdrHistogram (three significant digits).")

(defparameter *latency-max-ns* (* 600 1000000000)
  "The largest latency told apart, 10 minutes, the Go client's too; longer
ones count in the last bucket.")

(declaim (inline now-ns))
(defun now-ns ()
  "Nanoseconds on the monotonic clock."
  (multiple-value-bind (seconds nanoseconds) (sb-unix::clock-gettime 1) ; CLOCK_MONOTONIC
    (+ (* seconds 1000000000) nanoseconds)))

(defstruct (rep (:constructor make-rep ()))
  (wall-ns 0 :type integer)
  (ops 0 :type integer)
  (errors 0 :type integer)
  (msgs 0 :type integer)
  (first-error nil)
  (cpu-user-ns 0 :type integer)
  (cpu-system-ns 0 :type integer)
  (alloc-bytes 0 :type integer)         ; consed by this process
  (latency nil))                        ; a LATENCY-HISTOGRAM

(defstruct (worker (:constructor make-worker (id channel)))
  id channel
  (ops 0 :type fixnum) (errors 0 :type fixnum) (msgs 0 :type fixnum)
  (first-error nil) (first-error-at 0)
  (latency (latency-histogram:make-latency-histogram *latency-resolution* *latency-max-ns*)))

(defun worker-reset (w)
  (setf (worker-ops w) 0 (worker-errors w) 0 (worker-msgs w) 0
        (worker-first-error w) nil)
  (latency-histogram:histogram-clear (worker-latency w)))

(defun next-due (schedule deadline-ns)
  "The due time of the next call of an open loop, SCHEDULE being
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
all run.  Errors are counted, never raised; failed calls stay out of the
latencies, as a fast rejection is no latency the service achieved."
  (loop
    (when (and deadline-ns (not schedule) (>= (now-ns) deadline-ns)) (return))
    (when (and tickets (minusp (sb-ext:atomic-decf (car tickets)))) (return))
    (let ((start (if schedule
                     (or (next-due schedule deadline-ns) (return))
                     (now-ns))))
      (handler-case
          (let ((msgs (funcall op (worker-channel w) workload)))
            (latency-histogram:histogram-add (worker-latency w) (- (now-ns) start))
            (incf (worker-ops w))
            (incf (worker-msgs w) msgs))
        (error (e)
          (incf (worker-errors w))
          (unless (worker-first-error w)
            (setf (worker-first-error w) (princ-to-string e)
                  (worker-first-error-at w) (now-ns))))))))

(defun run-workers (workers op workload &key duration-ns tickets rate call-timeout)
  "Run every worker's loop in its own thread, released together; returns
the wall time in nanoseconds.  RATE (calls/s in all, with DURATION-NS)
makes the loop open; CALL-TIMEOUT (seconds) bounds each call."
  (let* ((gate (sb-thread:make-semaphore))
         (deadline (list nil))
         (schedule (and rate (list* 0 0 (round 1d9 rate))))
         (threads (loop for w in workers
                        collect (let ((w w))
                                  (sb-thread:make-thread
                                   (lambda ()
                                     (let ((*op-timeout* call-timeout))
                                       (sb-thread:wait-on-semaphore gate)
                                       (worker-loop w op workload (car deadline) tickets schedule)))
                                   :name "loadgen worker"))))
         (start (now-ns)))
    (when duration-ns
      (setf (car deadline) (+ start duration-ns)))
    (when schedule
      (setf (cadr schedule) start))
    (sb-thread:signal-semaphore gate (length workers))
    (mapc #'sb-thread:join-thread threads)
    (- (now-ns) start)))

(defun self-cpu-ns ()
  "This process's user and system CPU time in nanoseconds (getrusage, all
threads), as the Go harness reads its own."
  (multiple-value-bind (ok user-us system-us) (sb-unix:unix-getrusage sb-unix:rusage_self)
    (declare (ignore ok))
    (values (* 1000 user-us) (* 1000 system-us))))

(defun measure-rep (workers op workload &key duration-ns rate call-timeout)
  "One measured repetition, after a GC, so that the last one's garbage is
not charged to it."
  (mapc #'worker-reset workers)
  (sb-ext:gc)
  (let ((rep (make-rep))
        (bytes0 (sb-ext:get-bytes-consed)))
    (multiple-value-bind (user0 system0) (self-cpu-ns)
      (setf (rep-wall-ns rep) (run-workers workers op workload :duration-ns duration-ns :rate rate
                                                               :call-timeout call-timeout))
      (multiple-value-bind (user1 system1) (self-cpu-ns)
        (setf (rep-cpu-user-ns rep) (- user1 user0)
              (rep-cpu-system-ns rep) (- system1 system0)
              (rep-alloc-bytes rep) (- (sb-ext:get-bytes-consed) bytes0))))
    (let ((first-at nil)
          (latency (latency-histogram:make-latency-histogram *latency-resolution* *latency-max-ns*)))
      (dolist (w workers)
        (incf (rep-ops rep) (worker-ops w))
        (incf (rep-errors rep) (worker-errors w))
        (incf (rep-msgs rep) (worker-msgs w))
        (latency-histogram:histogram-merge latency (worker-latency w))
        (when (and (worker-first-error w)
                   (or (null first-at) (< (worker-first-error-at w) first-at)))
          (setf (rep-first-error rep) (worker-first-error w)
                first-at (worker-first-error-at w))))
      (setf (rep-latency rep) latency))
    rep))

(defun open-channels (host port clients mode)
  "One channel per client (per-client) or one shared by all (shared);
connected before measuring, so no repetition pays for a handshake.  A
server that does not answer fails here, with its reason."
  (let ((channels (if (string= mode "shared")
                      (make-list clients :initial-element (clgrpc.grpc:make-channel host port))
                      (loop repeat clients collect (clgrpc.grpc:make-channel host port)))))
    (handler-case
        (dolist (ch (remove-duplicates channels))
          ;; A round trip to an unknown method connects without touching
          ;; the service: UNIMPLEMENTED is the answer expected.
          (handler-case (clgrpc.grpc:unary-call ch "/routeguide.RouteGuide/Connect"
                                                (clgrpc.octets:octets-of) :timeout 10)
            (clgrpc.grpc:grpc-error (e)
              (unless (eql (clgrpc.grpc:grpc-error-code e) clgrpc.grpc:+unimplemented+)
                (error e)))))
      (error (e)
        (mapc #'clgrpc.grpc:channel-close (remove-duplicates channels))
        (error "connecting to ~A:~D: ~A" host port e)))
    channels))

(defstruct (cell (:constructor %make-cell (channels workers op workload call-timeout)))
  "One scenario's clients, connected to one server and kept from one
repetition to the next."
  channels workers op workload call-timeout)

(defun open-cell (&key host port kind clients mode workload call-timeout)
  (let ((channels (open-channels host port clients mode)))
    (%make-cell channels (loop for ch in channels for i from 0 collect (make-worker i ch))
                (operation kind) workload call-timeout)))

(defun close-cell (cell)
  (mapc #'clgrpc.grpc:channel-close (remove-duplicates (cell-channels cell))))

(defun cell-warm-up (cell &key ops duration-ns)
  "The unmeasured warm-up: OPS calls in all, or calls for DURATION-NS."
  (run-workers (cell-workers cell) (cell-op cell) (cell-workload cell)
               :tickets (and ops (list ops)) :duration-ns (and (not ops) duration-ns)
               :call-timeout (cell-call-timeout cell)))

(defun cell-measure (cell &key duration-ns rate)
  (measure-rep (cell-workers cell) (cell-op cell) (cell-workload cell)
               :duration-ns duration-ns :rate rate :call-timeout (cell-call-timeout cell)))
