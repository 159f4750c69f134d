;;;; Running one scenario's calls: N workers (one per client) call the
;;;; operation back to back for a fixed time, or, with a rate, on a fixed
;;;; schedule (an open loop, each latency counted from when its call was
;;;; due).  A repetition returns raw readings only: wall time, successful
;;;; and failed calls and the first failure, messages, this process's CPU
;;;; time and bytes consed, and the latencies of the successful calls in a
;;;; log-bucket histogram.  The Go harness that drives this program turns
;;;; them into results, as it does its own client's.

(in-package #:routeguide.loadgen)

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

;;; A repetition's raw readings.
(defstruct (rep (:constructor make-rep ()))
  (wall-ns 0 :type integer)
  (ops 0 :type integer)
  (errors 0 :type integer)
  (msgs 0 :type integer)
  (first-error nil)
  (cut-short nil)                       ; calls were still due or running at the time budget
  (cpu-user-ns 0 :type integer)
  (cpu-system-ns 0 :type integer)
  (alloc-bytes 0 :type integer))        ; consed by this process

(defstruct (worker (:constructor make-worker (id channel)))
  id channel
  (ops 0 :type fixnum) (errors 0 :type fixnum) (msgs 0 :type fixnum)
  (first-error nil) (first-error-at 0)
  (cut-short nil)
  (latency (latency-histogram:make-latency-histogram *latency-resolution* *latency-max-ns*))
  ;; Open loop: how late each call started after it was due (the client's
  ;; lateness, part of every latency, never the server's).
  (send-lag (latency-histogram:make-latency-histogram *latency-resolution* *latency-max-ns*)))

(defun worker-reset (w)
  (setf (worker-ops w) 0 (worker-errors w) 0 (worker-msgs w) 0
        (worker-first-error w) nil (worker-cut-short w) nil)
  (latency-histogram:histogram-clear (worker-latency w))
  (latency-histogram:histogram-clear (worker-send-lag w)))

(defconstant +clock-monotonic+ 1)
(defconstant +timer-abstime+ 1)
(defconstant +eintr+ 4)
(defconstant +pr-set-timerslack+ 29)

(defun precise-timer-slack ()
  "Let this thread's sleeps end within a nanosecond of their time instead of
the kernel's default 50 µs of slack, which would be booked as the server's
latency in an open loop."
  (sb-alien:alien-funcall
   (sb-alien:extern-alien "prctl" (function sb-alien:int sb-alien:int sb-alien:unsigned-long
                                           sb-alien:unsigned-long sb-alien:unsigned-long
                                           sb-alien:unsigned-long))
   +pr-set-timerslack+ 1 0 0 0))

(defun wait-until (due)
  "Return at monotonic time DUE (ns), or at once if it has passed: an
absolute clock_nanosleep, so that no time is lost between reading the clock
and sleeping, and the thread's core stays free for the other workers (no
polling, which would hold it while a reply waits)."
  (when (> due (now-ns))
    (sb-alien:with-alien ((ts (array (sb-alien:signed 64) 2)))
      (setf (sb-alien:deref ts 0) (floor due 1000000000)
            (sb-alien:deref ts 1) (mod due 1000000000))
      ;; Signals (the collector stopping the world) interrupt the sleep.
      (loop while (= +eintr+
                     (sb-alien:alien-funcall
                      (sb-alien:extern-alien "clock_nanosleep"
                                             (function sb-alien:int sb-alien:int sb-alien:int
                                                       sb-alien:system-area-pointer
                                                       sb-alien:system-area-pointer))
                      +clock-monotonic+ +timer-abstime+
                      (sb-alien:alien-sap ts) (sb-sys:int-sap 0)))))))

(defun next-due (schedule deadline-ns give-up)
  "The due time of the next call of an open loop, SCHEDULE being
(next-index start-ns . interval-ns) shared by the workers, after waiting
until then; NIL once it falls at or after DEADLINE-NS, and :GIVE-UP,
without waiting, if it falls at or after GIVE-UP (NIL: none)."
  (let* ((n (sb-ext:atomic-incf (car schedule))) ; the index before the increment
         (due (+ (cadr schedule) (* n (cddr schedule)))))
    (cond ((>= due deadline-ns) nil)
          ((and give-up (>= due give-up)) :give-up)
          (t (wait-until due)
             due))))

(defun worker-loop (w op workload run)
  "Call OP until the RUN's deadline (none: until its tickets run out); with
its schedule (see NEXT-DUE), each call waits until it is due, its latency
counts from then, and calls due before the deadline all run.  Each call
takes a ticket, and none starts, nor outlives, the run's time budget
\(give-up): what was cut short is marked.  Errors are counted, never
raised; failed calls stay out of the latencies, as a fast rejection is no
latency the service achieved."
  (let ((deadline (run-deadline run))
        (tickets (run-tickets run))
        (schedule (run-schedule run))
        (give-up (run-give-up run))
        (call-timeout (run-call-timeout run)))
    (flet ((cut-short () (setf (worker-cut-short w) t)))
      (loop
        (when (and deadline (not schedule) (>= (now-ns) deadline)) (return))
        (unless (plusp (sb-ext:atomic-decf (car tickets))) (return)) ; the count before this one
        (let ((start (if schedule
                         (let ((due (next-due schedule deadline give-up)))
                           (case due
                             ((nil) (return))
                             (:give-up (cut-short) (return))
                             (t due)))
                         (now-ns))))
          (let ((left (and give-up (- give-up (now-ns)))))
            (when (and left (<= left 0))
              (cut-short)
              (return))
            (setf *op-timeout* (if left (min call-timeout (/ left 1d9)) call-timeout)))
          (when schedule
            (latency-histogram:histogram-add (worker-send-lag w) (max 0 (- (now-ns) start))))
          (handler-case
              (let ((msgs (funcall op (worker-channel w) workload)))
                (latency-histogram:histogram-add (worker-latency w) (- (now-ns) start))
                (incf (worker-ops w))
                (incf (worker-msgs w) msgs))
            (error (e)
              (note-failure w e)))
          ;; A call that ran into the budget (its timeout trimmed to it)
          ;; cut the run short, whatever ends the loop next.
          (when (and give-up (>= (now-ns) give-up))
            (cut-short)
            (return)))))))

(defun note-failure (w condition)
  (incf (worker-errors w))
  (unless (worker-first-error w)
    (setf (worker-first-error w) (princ-to-string condition)
          (worker-first-error-at w) (now-ns))))

;;; A run: every worker's loop in a thread of its own, parked until
;;; released, so that neither thread creation nor the last run's garbage is
;;; charged to it.
(defstruct (run (:constructor %make-run))
  threads
  (gate (sb-thread:make-semaphore))
  (deadline nil)                        ; now-ns, set at release from DURATION-NS
  duration-ns
  tickets                               ; (count): calls left to start
  schedule                              ; open loop: (next-index start-ns . interval-ns)
  (give-up nil)                         ; now-ns: no call starts or outlives it
  call-timeout)                         ; seconds

(defun prepare-run (workers op workload &key duration-ns max-ops rate call-timeout give-up)
  "WORKERS' threads, created and parked; RATE (calls/s in all, with
DURATION-NS) makes the loop open.  At most MAX-OPS calls start, none
after GIVE-UP (NOW-NS time, NIL for no bound).  A worker's thread fails
its calls, never the program, whatever it runs into."
  (let ((run (%make-run :duration-ns duration-ns :tickets (list max-ops)
                        :schedule (and rate (list* 0 0 (max 1 (round 1d9 rate))))
                        :give-up give-up :call-timeout call-timeout))
        (done nil))
    (mapc #'worker-reset workers)
    (unwind-protect
         (progn
           (dolist (w workers)
             (let ((w w))
               (push (sb-thread:make-thread
                      (lambda ()
                        (let ((*op-timeout* call-timeout))
                          (precise-timer-slack)
                          (sb-thread:wait-on-semaphore (run-gate run))
                          (handler-case (worker-loop w op workload run)
                            ;; Out of heap or stack: the worker stops, and says why.
                            (serious-condition (e) (note-failure w e)))))
                      :name "loadgen worker")
                     (run-threads run))))
           (setf done t)
           run)
      ;; Threads made before one could not be: released with nothing to do.
      (unless done
        (abandon-run run)))))

(defun release-run (run)
  "Start RUN's workers together and wait for them; returns the wall time in
nanoseconds."
  (let ((start (now-ns)))
    (when (run-duration-ns run)
      (setf (run-deadline run) (+ start (run-duration-ns run))))
    (when (run-schedule run)
      (setf (cadr (run-schedule run)) start))
    (sb-thread:signal-semaphore (run-gate run) (length (run-threads run)))
    (dolist (thread (run-threads run))
      (sb-thread:join-thread thread :default nil))
    (- (now-ns) start)))

(defun abandon-run (run)
  "Release RUN's parked workers with no calls to make."
  (setf (car (run-tickets run)) 0)
  (release-run run)
  nil)

(defun self-cpu-ns ()
  "This process's user and system CPU time in nanoseconds (getrusage, all
threads), as the Go harness reads its own."
  (multiple-value-bind (ok user-us system-us) (sb-unix:unix-getrusage sb-unix:rusage_self)
    (declare (ignore ok))
    (values (* 1000 user-us) (* 1000 system-us))))

(defun measure-run (run workers)
  "Release RUN and read what it cost: its wall time, this process's CPU time
and bytes consed, and its workers' counts."
  (let ((rep (make-rep))
        (bytes0 (sb-ext:get-bytes-consed)))
    (multiple-value-bind (user0 system0) (self-cpu-ns)
      (setf (rep-wall-ns rep) (release-run run))
      (multiple-value-bind (user1 system1) (self-cpu-ns)
        (setf (rep-cpu-user-ns rep) (- user1 user0)
              (rep-cpu-system-ns rep) (- system1 system0)
              (rep-alloc-bytes rep) (- (sb-ext:get-bytes-consed) bytes0))))
    (let ((first-at nil))
      (dolist (w workers)
        (incf (rep-ops rep) (worker-ops w))
        (incf (rep-errors rep) (worker-errors w))
        (incf (rep-msgs rep) (worker-msgs w))
        (when (worker-cut-short w)
          (setf (rep-cut-short rep) t))
        (when (and (worker-first-error w)
                   (or (null first-at) (< (worker-first-error-at w) first-at)))
          (setf (rep-first-error rep) (worker-first-error w)
                first-at (worker-first-error-at w)))))
    rep))

(defun workers-histogram (workers reader)
  "The histograms READER gives of WORKERS' last run, merged."
  (let ((merged (latency-histogram:make-latency-histogram *latency-resolution* *latency-max-ns*)))
    (dolist (w workers merged)
      (latency-histogram:histogram-merge merged (funcall reader w)))))

(defconstant +connect-seconds+ 10
  "How long a cell's connections may take to be ready, all of them: the
Go client's bound too.")

(defun open-channels (host port clients mode)
  "One channel per client (per-client) or one shared by all (shared);
connected before measuring, so no repetition pays for a handshake.  A
server that does not answer within +CONNECT-SECONDS+ fails here, with its
reason."
  (let* ((channels (if (string= mode "shared")
                       (make-list clients :initial-element (clgrpc.grpc:make-channel host port))
                       (loop repeat clients collect (clgrpc.grpc:make-channel host port))))
         (distinct (remove-duplicates channels))
         (give-up (+ (now-ns) (* +connect-seconds+ 1000000000))))
    (handler-case
        (dolist (ch distinct)
          ;; A round trip to an unknown method connects without touching
          ;; the service: UNIMPLEMENTED is the answer expected.
          (let ((left (/ (- give-up (now-ns)) 1d9)))
            (when (<= left 0)
              (error "~D connections not ready within ~D s" (length distinct) +connect-seconds+))
            (handler-case (clgrpc.grpc:unary-call ch "/routeguide.RouteGuide/Connect"
                                                  (clgrpc.octets:octets-of) :timeout left)
              (clgrpc.grpc:grpc-error (e)
                (unless (eql (clgrpc.grpc:grpc-error-code e) clgrpc.grpc:+unimplemented+)
                  (error e))))))
      (error (e)
        (mapc #'clgrpc.grpc:channel-close distinct)
        (error "connecting to ~A:~D: ~A" host port e)))
    channels))

(defparameter *open-loop-callers* 128
  "How many calls an open loop keeps in flight at most, in all (one thread
each, the clients' channels taken in turn; at least one per client).  The
schedule does not wait for a slow call while another caller is free, so a
stall shows as a queue of due calls, each late by its wait, up to this
many; past it, calls start late, and the send lag says by how much.
Threads, since a clgrpc client call blocks its thread; each costs two
latency histograms (about 0.4 MB), which is what bounds it.")

(defstruct (cell (:constructor %make-cell (channels workers op workload call-timeout)))
  "One scenario's clients, connected to one server and kept from one
repetition to the next, and the repetition prepared or last measured."
  channels workers op workload call-timeout
  (open-loop-workers nil)               ; the open loop's callers, made when first needed
  (callers nil)                         ; the workers of the run prepared or last run
  (prepared nil)                        ; a RUN, parked
  (measured nil))                       ; T once a run has ended: its latencies can be read

(defun cell-open-loop-callers (cell)
  "The workers of CELL's open loop: *OPEN-LOOP-CALLERS* (at least one per
client), over the clients' channels in turn."
  (or (cell-open-loop-workers cell)
      (setf (cell-open-loop-workers cell)
            (let* ((channels (cell-channels cell))
                   (n (max (length channels) *open-loop-callers*)))
              (loop for i below n
                    collect (make-worker i (nth (mod i (length channels)) channels)))))))

(defun open-cell (&key host port kind clients mode workload call-timeout)
  (let ((channels (open-channels host port clients mode)))
    (%make-cell channels (loop for ch in channels for i from 0 collect (make-worker i ch))
                (operation kind) workload call-timeout)))

(defun close-cell (cell)
  (let ((run (shiftf (cell-prepared cell) nil)))
    (when run (abandon-run run)))
  (mapc #'clgrpc.grpc:channel-close (remove-duplicates (cell-channels cell))))

(defun cell-warm-up (cell &key ops duration-ns max-ops give-up)
  "The unmeasured warm-up: OPS calls in all, or calls for DURATION-NS (at
most MAX-OPS), none after GIVE-UP.  True if it was cut short."
  (when (cell-prepared cell)
    (error "a repetition is prepared: start it first"))
  (let ((run (prepare-run (cell-workers cell) (cell-op cell) (cell-workload cell)
                          :max-ops (or ops max-ops most-positive-fixnum)
                          :duration-ns (and (not ops) duration-ns)
                          :call-timeout (cell-call-timeout cell) :give-up give-up)))
    (setf (cell-measured cell) nil)
    (release-run run)
    (some #'worker-cut-short (cell-workers cell))))

(defun cell-prepare (cell &key duration-ns rate max-ops give-up)
  "Park the threads of the next repetition, after a full collection."
  (when (cell-prepared cell)
    (error "a repetition is prepared already"))
  (sb-ext:gc :full t)
  (setf (cell-measured cell) nil
        (cell-callers cell) (if rate (cell-open-loop-callers cell) (cell-workers cell))
        (cell-prepared cell)
        (prepare-run (cell-callers cell) (cell-op cell) (cell-workload cell)
                     :duration-ns duration-ns :rate rate :max-ops max-ops
                     :call-timeout (cell-call-timeout cell) :give-up give-up)))

(defun cell-start (cell)
  "Run the prepared repetition; its REP."
  (let ((run (or (shiftf (cell-prepared cell) nil)
                 (error "no repetition is prepared"))))
    (prog1 (measure-run run (cell-callers cell))
      (setf (cell-measured cell) t))))

(defun cell-latency (cell)
  "The latencies of the repetition last run."
  (unless (cell-measured cell)
    (error "no repetition has run since the last warm-up or preparation"))
  (workers-histogram (cell-callers cell) #'worker-latency))

(defun cell-send-lag (cell)
  "How late the calls of the repetition last run started after they were
due: empty unless it was an open loop."
  (unless (cell-measured cell)
    (error "no repetition has run since the last warm-up or preparation"))
  (workers-histogram (cell-callers cell) #'worker-send-lag))
