;;;; The Lisp RouteGuide load generator: the calls of a RouteGuide benchmark
;;;; made with clgrpc's client, driven by the Go load generator
;;;; (go/routeguide/loadgen -lisp_client PATH), which starts this program on
;;;; the client's CPUs, measures the server, and computes and writes every
;;;; result.  This program only makes calls and reports raw readings.
;;;;
;;;; It reads one JSON object per line on stdin and answers each with one
;;;; JSON object per line on stdout, {"ok":true,...} or {"error":"why"}
;;;; (blank lines are skipped); it ends at end of input, closing every
;;;; connection.  Commands:
;;;;
;;;;   {"command":"open","cell":1,"host":"127.0.0.1","port":5000,"rpc":"unary",
;;;;    "clients":10,"conns":"per-client","stream_msgs":10,"call_timeout_ms":15000}
;;;;       connect a scenario's clients (a cell), and check the server answers
;;;;   {"command":"warm_up","cell":1,"ops":500,"budget_ns":...}
;;;;       or "duration_ns" (and "max_ops") instead of "ops"; the reply says
;;;;       "cut_short" if calls were still due at the budget
;;;;   {"command":"measure","cell":1,"duration_ns":5000000000,"rate":0,
;;;;    "max_ops":100000000,"budget_ns":...}
;;;;       prepare one repetition: a full collection, the threads parked
;;;;   {"command":"start","cell":1}
;;;;       run it; the reply has wall_ns, ops, errors, msgs, first_error,
;;;;       cut_short, cpu_user_ns, cpu_system_ns and alloc_bytes
;;;;   {"command":"latencies","cell":1}
;;;;       its latencies: {resolution, max_possible_ns, count,
;;;;       buckets: [[index, count], ...]} (gRPC's log buckets, the empty
;;;;       ones left out), and in send_lag, in the same form, how late each
;;;;       call of an open loop started after it was due (empty otherwise)
;;;;   {"command":"close","cell":1}
;;;;   {"command":"version"}  -> {"ok":true,"sbcl_version":"SBCL 2.5.10"}
;;;;
;;;; A repetition takes three commands so that the parent reads the server's
;;;; CPU time and the host's CPU stall just around the calls, as it does for
;;;; its own client.  budget_ns counts from when a warm_up or measure is
;;;; read; no call starts after it, nor outlives it (a measure's calls run
;;;; at start, within its budget): a server that never answers ends the
;;;; command at its budget, reported as cut short, instead of holding this
;;;; program.
;;;;
;;;; A pipe rather than gRPC's WorkerService, whose client configuration
;;;; describes BenchmarkService calls and has no place for RouteGuide's: the
;;;; parent owns this process (its end of input is this program's end), and
;;;; needs no port.

(in-package #:routeguide.loadgen)

(defconstant +max-command-length+ 65536
  "Longer command lines are refused: the commands are a few hundred octets.")

(defconstant +max-rate+ 1000000000
  "Calls per second at most: one a nanosecond.")

(defconstant +min-rate+ 0.01d0
  "Calls per second at least, in an open loop: one every 100 s.")

(defstruct (agent (:constructor make-agent ()))
  (cells (make-hash-table))             ; cell number -> CELL
  (workloads (make-hash-table)))        ; stream_msgs -> WORKLOAD, one per run

(define-condition command-error (error)
  ((message :initarg :message :reader command-error-message))
  (:report (lambda (c stream) (write-string (command-error-message c) stream))))

(defun command-fail (format-control &rest args)
  (error 'command-error :message (apply #'format nil format-control args)))

(defun field (command name test want)
  "COMMAND's field NAME, which TEST must accept; WANT describes it."
  (let ((entry (assoc name command :test #'string=)))
    (unless (and entry (funcall test (cdr entry)))
      (command-fail "field ~S: want ~A, got ~:[nothing~;~:*~S~]" name want (and entry (cdr entry))))
    (cdr entry)))

(defun optional-field (command name test want)
  (and (assoc name command :test #'string=) (field command name test want)))

(defun integer-in (low high)
  (lambda (x) (and (integerp x) (<= low x high))))

(defun agent-cell (agent command)
  (let ((n (field command "cell" (integer-in 0 most-positive-fixnum) "a cell number")))
    (or (gethash n (agent-cells agent))
        (command-fail "cell ~D is not open" n))))

(defun agent-workload (agent stream-msgs)
  "The workload of STREAM-MSGS, shared by every cell of the run, so that no
two RouteChat calls of the run use one location."
  (or (gethash stream-msgs (agent-workloads agent))
      (setf (gethash stream-msgs (agent-workloads agent)) (make-workload stream-msgs))))

(defun command-open (agent command)
  (let ((n (field command "cell" (integer-in 0 most-positive-fixnum) "a cell number"))
        (host (field command "host" #'stringp "a host name or address"))
        (port (field command "port" (integer-in 1 65535) "a port"))
        (kind (field command "rpc" (lambda (k) (member k *rpc-kinds* :test #'equal))
                     (format nil "one of ~{~A~^, ~}" *rpc-kinds*)))
        (clients (field command "clients" (integer-in 1 10000) "a client count from 1 to 10000"))
        (mode (field command "conns" (lambda (m) (member m '("per-client" "shared") :test #'equal))
                     "per-client or shared"))
        (stream-msgs (field command "stream_msgs" (integer-in 1 100000) "a message count from 1 to 100000"))
        (timeout-ms (field command "call_timeout_ms" (integer-in 1 3600000) "milliseconds, at most an hour")))
    (when (gethash n (agent-cells agent))
      (command-fail "cell ~D is open already" n))
    (setf (gethash n (agent-cells agent))
          (open-cell :host host :port port :kind kind :clients clients :mode mode
                     :workload (agent-workload agent stream-msgs) :call-timeout (/ timeout-ms 1000)))
    (list :ok t)))

(defun give-up-field (command received)
  "The give-up time of COMMAND's budget_ns, counted from RECEIVED (when the
command was read, NOW-NS time), or NIL."
  (let ((budget (optional-field command "budget_ns" (integer-in 1 most-positive-fixnum)
                                "positive nanoseconds")))
    (and budget (+ received budget))))

(defun max-ops-field (command)
  (optional-field command "max_ops" (integer-in 1 most-positive-fixnum) "a positive count"))

(defun command-warm-up (agent command received)
  (let ((cell (agent-cell agent command))
        (ops (optional-field command "ops" (integer-in 1 most-positive-fixnum) "a positive count"))
        (duration-ns (optional-field command "duration_ns" (integer-in 1 most-positive-fixnum)
                                     "positive nanoseconds")))
    (unless (or ops duration-ns) (command-fail "warm_up needs ops or duration_ns"))
    (when (cell-prepared cell)
      (command-fail "a repetition is prepared: start it first"))
    (list :ok t :cut-short (if (cell-warm-up cell :ops ops :duration-ns duration-ns
                                                   :max-ops (max-ops-field command)
                                                   :give-up (give-up-field command received))
                               t :false))))

(defun command-measure (agent command received)
  (let ((cell (agent-cell agent command))
        (duration-ns (field command "duration_ns" (integer-in 1 most-positive-fixnum) "positive nanoseconds"))
        (rate (or (optional-field command "rate"
                                  (lambda (r) (and (realp r) (or (zerop r) (<= +min-rate+ r +max-rate+))))
                                  (format nil "0 (a closed loop) or calls per second from ~A to ~D"
                                          +min-rate+ +max-rate+))
                  0))
        (max-ops (or (max-ops-field command) most-positive-fixnum)))
    (when (cell-prepared cell)
      (command-fail "a repetition is prepared already: start it first"))
    (cell-prepare cell :duration-ns duration-ns :rate (and (plusp rate) rate) :max-ops max-ops
                       :give-up (give-up-field command received))
    (list :ok t)))

(defun command-start (agent command)
  (let ((cell (agent-cell agent command)))
    (unless (cell-prepared cell)
      (command-fail "no repetition is prepared: send measure first"))
    (let ((rep (cell-start cell)))
      (list* :ok t :wall-ns (rep-wall-ns rep) :ops (rep-ops rep) :errors (rep-errors rep)
             :msgs (rep-msgs rep)
             (append (and (rep-first-error rep) (list :first-error (rep-first-error rep)))
                     (list :cut-short (if (rep-cut-short rep) t :false)
                           :cpu-user-ns (rep-cpu-user-ns rep) :cpu-system-ns (rep-cpu-system-ns rep)
                           :alloc-bytes (rep-alloc-bytes rep)))))))

(defun command-latencies (agent command)
  (let ((cell (agent-cell agent command)))
    (unless (cell-measured cell)
      (command-fail "no repetition has run since the last warm-up or measure"))
    (list :ok t :latency (latency-json (cell-latency cell))
          :send-lag (latency-json (cell-send-lag cell)))))

(defun latency-json (h)
  (list :resolution *latency-resolution* :max-possible-ns *latency-max-ns*
        :count (latency-histogram:latency-histogram-count h)
        :buckets (loop for count across (latency-histogram:latency-histogram-buckets h)
                       for i from 0
                       when (plusp count) collect (list i count))))

(defun command-close (agent command)
  (let ((cell (agent-cell agent command)))
    (remhash (field command "cell" #'integerp "a cell number") (agent-cells agent))
    (close-cell cell)
    (list :ok t)))

(defun command-version (agent command)
  (declare (ignore agent command))
  (list :ok t :sbcl-version (format nil "~A ~A" (lisp-implementation-type) (lisp-implementation-version))))

(defun answer (agent line)
  "The reply to one command line (or :TOO-LONG), as a plist."
  (let ((received (now-ns)))
    (handler-case
      (let ((command (if (eq line :too-long)
                         (command-fail "a command line longer than ~D characters" +max-command-length+)
                         (handler-case (parse-json line)
                           (error (e) (command-fail "not JSON: ~A" e))))))
        (unless (and (listp command) (every (lambda (e) (and (consp e) (stringp (car e)))) command))
          (command-fail "a command is a JSON object"))
        (let ((name (field command "command" #'stringp "a command name")))
          (cond ((string= name "warm_up") (command-warm-up agent command received))
                ((string= name "measure") (command-measure agent command received))
                (t (funcall (cond ((string= name "open") #'command-open)
                                  ((string= name "start") #'command-start)
                                  ((string= name "latencies") #'command-latencies)
                                  ((string= name "close") #'command-close)
                                  ((string= name "version") #'command-version)
                                  (t (command-fail "unknown command ~S (want open, warm_up, measure, ~
                                                    start, latencies, close or version)"
                                                   name)))
                            agent command)))))
    ;; A SERIOUS-CONDITION too: exhausting the stack or the heap fails the
    ;; command, not the program.
    (serious-condition (e) (list :error (princ-to-string e))))))

(defun read-command-line (in)
  "The next line of IN without its newline, :TOO-LONG for a line longer than
+MAX-COMMAND-LENGTH+ (read to its end, never held), or NIL at the end."
  (let ((line (make-string-output-stream))
        (length 0))
    (loop for c = (read-char in nil)
          do (cond ((null c) (return (cond ((zerop length) nil)
                                           ((> length +max-command-length+) :too-long)
                                           (t (get-output-stream-string line)))))
                   ((char= c #\Newline)
                    (return (if (> length +max-command-length+) :too-long (get-output-stream-string line))))
                   ((< length +max-command-length+) (write-char c line) (incf length))
                   (t (setf length (1+ +max-command-length+)))))))

(defun serve-commands (in out)
  "Answer the commands on IN until its end, then close every cell."
  (let ((agent (make-agent)))
    (unwind-protect
         (loop for line = (read-command-line in)
               while line
               unless (and (stringp line) (zerop (length (string-trim '(#\Space #\Tab #\Return) line))))
                 do (write-json (answer agent line) out)
                    (terpri out)
                    (finish-output out))
      (loop for cell being the hash-values of (agent-cells agent)
            do (ignore-errors (close-cell cell))))))

(defun loadgen-main ()
  "Entry point of the load generator executable; returns the exit code."
  (call-with-command-line
   '() (rest sb-ext:*posix-argv*)
   (lambda (options rest given)
     (declare (ignore options given))
     (when rest (flag-fail "unexpected arguments: [~{~S~^ ~}]" rest))
     ;; Replies own stdout: anything else printed goes to stderr.
     (let ((replies *standard-output*))
       (setf *standard-output* *error-output*)
       (serve-commands *standard-input* replies))
     0)
   :synopsis ""
   :description "Makes RouteGuide calls with clgrpc for the Go load generator, which starts it with
-lisp_client: JSON commands on stdin (open, warm_up, measure, start, latencies, close, version),
one JSON reply per line on stdout, raw readings only."))
