;;;; A benchmark client: client_channels channels to the server targets,
;;;; each with outstanding_rpcs_per_channel calls in flight, for as long as
;;;; the driver lets it run.  Each of those calls is a thread of its own
;;;; (clgrpc's client calls block), with its own histogram under its own
;;;; lock, so that recording a latency contends with nothing but a mark.
;;;;
;;;; What a latency is follows gRPC's clients:
;;;;   UNARY                  one call, start to response
;;;;   STREAMING              one request-response round trip on a stream
;;;;   STREAMING_FROM_CLIENT  one request sent
;;;;   STREAMING_FROM_SERVER  the time between two responses
;;;; Closed loop: the next right after the last.  Poisson: each call thread
;;;; starts its next at exponentially distributed intervals, offered_load
;;;; per second over all of them.  Every recorded latency counts as one
;;;; request of status OK; a failed call counts once under its status.

(in-package #:qps)

(defstruct (call-slot (:constructor make-call-slot (channel histogram)))
  channel
  histogram
  (lock (sb-thread:make-mutex :name "qps call slot"))
  (statuses '())                        ; ((code . count) ...)
  (thread nil))

(defstruct (benchmark-client (:constructor %make-benchmark-client))
  plan
  (channels '())
  (slots '())
  (stopping nil)
  (lock (sb-thread:make-mutex :name "qps client stats"))
  (mark (make-usage-mark))
  (pinned nil))

(declaim (inline now-ns))
(defun now-ns ()
  (multiple-value-bind (seconds nanoseconds) (sb-unix::clock-gettime 1) ; CLOCK_MONOTONIC
    (+ (* seconds 1000000000) nanoseconds)))

(defun stopping-p (client) (benchmark-client-stopping client))

(defun count-status (slot code)
  (let ((entry (assoc code (call-slot-statuses slot))))
    (if entry
        (incf (cdr entry))
        (push (cons code 1) (call-slot-statuses slot)))))

(defun record-latency (slot nanoseconds)
  (sb-thread:with-mutex ((call-slot-lock slot))
    (histogram-add (call-slot-histogram slot) nanoseconds)
    (count-status slot clgrpc.grpc:+ok+)))

(defun histogram-data (h)
  "H as a grpc.testing.HistogramData message."
  (make-histogram-data :bucket (coerce (latency-histogram-buckets h) 'list)
                       :min-seen (latency-histogram-min-seen h)
                       :max-seen (latency-histogram-max-seen h)
                       :sum (latency-histogram-sum h)
                       :sum-of-squares (latency-histogram-sum-of-squares h)
                       :count (float (latency-histogram-count h) 1d0)))

(defun record-failure (client slot condition)
  "Count a failed call, unless the client is stopping (its own shutdown
fails the calls in flight), and pause a moment, so that a server that is
gone costs retries at a bounded rate instead of a spinning thread."
  (unless (stopping-p client)
    (sb-thread:with-mutex ((call-slot-lock slot))
      (count-status slot (if (typep condition 'clgrpc.grpc:grpc-error)
                             (clgrpc.grpc:grpc-error-code condition)
                             clgrpc.grpc:+unavailable+)))
    (sleep 0.01)))

(defun make-pacer (client plan slots)
  "A function that returns once the next call of this thread is due: at
once for a closed loop; for Poisson load, after an exponentially
distributed interval with mean SLOTS / offered_load seconds, counted from
when the last one was due, so that a slow call does not lower the load.
It waits in slices of at most 50 ms, and returns at once when the client
stops."
  (if (eq (getf plan :load) :closed-loop)
      (lambda ())
      (let ((random (make-random-state t))
            (mean-ns (/ (* slots 1d9) (getf plan :offered-load)))
            (due (now-ns)))
        (lambda ()
          (incf due (round (* mean-ns (- (log (- 1d0 (random 1d0 random)))))))
          (loop for wait = (- due (now-ns))
                while (and (plusp wait) (not (stopping-p client)))
                do (sleep (min 0.05d0 (/ wait 1d9))))))))

(defun make-request (plan)
  (make-simple-request :response-type :compressable
                       :response-size (getf plan :response-size)
                       :payload (make-payload :type :compressable
                                              :body (zero-body (getf plan :request-size)))))

(defun unary-loop (client slot request pace)
  (loop until (stopping-p client)
        do (funcall pace)
           (let ((start (now-ns)))
             (handler-case
                 (progn (benchmark-service-unary-call (call-slot-channel slot) request)
                        (record-latency slot (- (now-ns) start)))
               (error (e) (record-failure client slot e))))))

(defun stream-loop (client slot open step)
  "Open a call with OPEN, then call STEP on it until it returns NIL (the
stream is done: open another) or the client stops."
  (loop until (stopping-p client)
        do (handler-case
               (let ((call (funcall open (call-slot-channel slot))))
                 (loop until (stopping-p client)
                       while (funcall step call)))
             (error (e) (record-failure client slot e)))))

(defun ping-pong-loop (client slot request pace per-stream)
  (let ((sent 0))
    (stream-loop client slot
                 (lambda (channel)
                   (setf sent 0)
                   (benchmark-service-streaming-call channel))
                 (lambda (call)
                   (cond ((and (plusp per-stream) (>= sent per-stream))
                          (clgrpc.grpc:call-close-send call)
                          (loop while (clgrpc.grpc:call-recv call))
                          nil)
                         (t
                          (funcall pace)
                          (let ((start (now-ns)))
                            (clgrpc.grpc:call-send call request)
                            (when (clgrpc.grpc:call-recv call)
                              (incf sent)
                              (record-latency slot (- (now-ns) start))
                              t))))))))

(defun client-stream-loop (client slot request pace per-stream)
  (let ((sent 0))
    (stream-loop client slot
                 (lambda (channel)
                   (setf sent 0)
                   (benchmark-service-streaming-from-client channel))
                 (lambda (call)
                   (cond ((and (plusp per-stream) (>= sent per-stream))
                          (clgrpc.grpc:call-close-and-recv call)
                          nil)
                         (t
                          (funcall pace)
                          (let ((start (now-ns)))
                            (clgrpc.grpc:call-send call request)
                            (incf sent)
                            (record-latency slot (- (now-ns) start))
                            t)))))))

(defun server-stream-loop (client slot request)
  (let ((last 0))
    (stream-loop client slot
                 (lambda (channel)
                   (prog1 (benchmark-service-streaming-from-server channel request)
                     (setf last (now-ns))))
                 (lambda (call)
                   (when (clgrpc.grpc:call-recv call)
                     (let ((now (now-ns)))
                       (record-latency slot (- now last))
                       (setf last now))
                     t)))))

(defun run-call-slot (client slot request)
  (let* ((plan (benchmark-client-plan client))
         (pace (make-pacer client plan (length (benchmark-client-slots client))))
         (per-stream (getf plan :messages-per-stream)))
    (ecase (getf plan :rpc-type)
      (:unary (unary-loop client slot request pace))
      (:streaming (ping-pong-loop client slot request pace per-stream))
      (:streaming-from-client (client-stream-loop client slot request pace per-stream))
      (:streaming-from-server (server-stream-loop client slot request)))))

(defun start-benchmark-client (config worker-cpus)
  "Start a client as CONFIG (a ClientConfig) says.  With core_list or
core_limit, the whole worker process is bound to those CPUs until the
client stops.  If starting fails part-way, what was started is stopped
again, and the worker's CPUs restored."
  (let* ((plan (check-client-config config worker-cpus))
         (cpus (getf plan :cpus))
         (targets (getf plan :targets))
         (client (%make-benchmark-client :plan plan :pinned (and cpus t)))
         (started nil))
    (when cpus
      (unless (pin-process cpus)
        (invalid (if (client-config-core-list config) "client_config.core_list" "client_config.core_limit")
                 "cannot bind this worker to CPUs ~A" (format-cpu-list cpus))))
    (unwind-protect
         (let ((request (make-request plan)))  ; one, shared: only read
           (setf (benchmark-client-channels client)
                 (loop for i below (getf plan :channels)
                       for (host . port) = (nth (mod i (length targets)) targets)
                       collect (clgrpc.grpc:make-channel host port))
                 (benchmark-client-slots client)
                 (loop for channel in (benchmark-client-channels client)
                       append (loop repeat (getf plan :outstanding)
                                    collect (make-call-slot
                                             channel (make-latency-histogram
                                                      (getf plan :resolution)
                                                      (getf plan :max-possible))))))
           (dolist (slot (benchmark-client-slots client))
             (let ((slot slot))
               (setf (call-slot-thread slot)
                     (sb-thread:make-thread (lambda () (run-call-slot client slot request))
                                            :name "qps client call"))))
           (setf started t)
           client)
      (unless started
        (stop-benchmark-client client worker-cpus)))))

(defun benchmark-client-stats (client reset)
  "ClientStats since the last reset; with RESET, a new interval starts."
  (let* ((plan (benchmark-client-plan client))
         (merged (make-latency-histogram (getf plan :resolution) (getf plan :max-possible)))
         (statuses '()))
    (sb-thread:with-mutex ((benchmark-client-lock client))
      (dolist (slot (benchmark-client-slots client))
        (sb-thread:with-mutex ((call-slot-lock slot))
          (histogram-merge merged (call-slot-histogram slot))
          (loop for (code . n) in (call-slot-statuses slot)
                do (let ((entry (assoc code statuses)))
                     (if entry (incf (cdr entry) n) (push (cons code n) statuses))))
          (when reset
            (histogram-clear (call-slot-histogram slot))
            (setf (call-slot-statuses slot) '()))))
      (let ((now (make-usage-mark)))
        (multiple-value-bind (elapsed user system) (usage-since (benchmark-client-mark client) now)
          (when reset
            (setf (benchmark-client-mark client) now))
          (make-client-stats
           :latencies (histogram-data merged)
           :time-elapsed elapsed :time-user user :time-system system
           :request-results (loop for (code . n) in (sort statuses #'< :key #'car)
                                  collect (make-request-result-count :status-code code :count n))))))))

(defun stop-benchmark-client (client worker-cpus)
  "Stop every call thread: closing the channels fails the calls in flight,
and each thread sees the client stopping.  Threads still running 10
seconds later (all of them together) are left to end by themselves, and
reported."
  (setf (benchmark-client-stopping client) t)
  (mapc #'clgrpc.grpc:channel-close (benchmark-client-channels client))
  (let* ((deadline (+ (get-internal-real-time) (* 10 internal-time-units-per-second)))
         (stuck (loop for slot in (benchmark-client-slots client)
                      for thread = (call-slot-thread slot)
                      count (and thread
                                 (eq :timeout (sb-thread:join-thread
                                               thread :default :timeout
                                                      :timeout (max 0 (/ (- deadline (get-internal-real-time))
                                                                         internal-time-units-per-second))))))))
    (when (plusp stuck)
      (format *error-output* "qps worker: ~D client call threads did not stop within 10 s~%" stuck)))
  (when (benchmark-client-pinned client)
    (pin-process worker-cpus)))
