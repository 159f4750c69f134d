;;;; The Lisp RouteGuide load generator: the calls of a RouteGuide benchmark
;;;; made with clgrpc's client, driven by the Go load generator
;;;; (go/routeguide/loadgen -lisp_client PATH), which starts this program on
;;;; the client's CPUs, measures the server, and computes and writes every
;;;; result.  This program only makes calls and reports raw readings.
;;;;
;;;; It reads one JSON object per line on stdin and answers each with one
;;;; JSON object per line on stdout, {"ok":true,...} or {"error":"why"};
;;;; it ends at end of input, closing every connection.  Commands:
;;;;
;;;;   {"command":"open","cell":1,"host":"127.0.0.1","port":5000,"rpc":"unary",
;;;;    "clients":10,"conns":"per-client","stream_msgs":10,"call_timeout_ms":15000}
;;;;       connect a scenario's clients (a cell), and check the server answers
;;;;   {"command":"warm_up","cell":1,"ops":500}  or  {...,"duration_ns":1000000000}
;;;;   {"command":"measure","cell":1,"duration_ns":5000000000,"rate":0}
;;;;       one repetition; the reply has wall_ns, ops, errors, msgs,
;;;;       first_error, cpu_user_ns, cpu_system_ns, alloc_bytes and latency
;;;;       {resolution, max_possible_ns, count, buckets: [[index, count], ...]}
;;;;       (gRPC's log buckets, the empty ones left out)
;;;;   {"command":"close","cell":1}
;;;;   {"command":"version"}  -> {"ok":true,"sbcl_version":"SBCL 2.5.10"}
;;;;
;;;; A pipe rather than gRPC's WorkerService, whose client configuration
;;;; describes BenchmarkService calls and has no place for RouteGuide's: the
;;;; parent owns this process (its end of input is this program's end), and
;;;; needs no port.

(in-package #:routeguide)

(defconstant +max-command-length+ 65536
  "Longer command lines are refused: the commands are a few hundred octets.")

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

(defun command-warm-up (agent command)
  (let ((cell (agent-cell agent command))
        (ops (optional-field command "ops" (integer-in 1 most-positive-fixnum) "a positive count"))
        (duration-ns (optional-field command "duration_ns" (integer-in 1 most-positive-fixnum)
                                     "positive nanoseconds")))
    (unless (or ops duration-ns) (command-fail "warm_up needs ops or duration_ns"))
    (cell-warm-up cell :ops ops :duration-ns duration-ns)
    (list :ok t)))

(defun command-measure (agent command)
  (let* ((cell (agent-cell agent command))
         (duration-ns (field command "duration_ns" (integer-in 1 most-positive-fixnum) "positive nanoseconds"))
         (rate (or (optional-field command "rate" (lambda (r) (and (realp r) (not (minusp r))))
                                   "calls per second, 0 for a closed loop")
                   0))
         (rep (cell-measure cell :duration-ns duration-ns :rate (and (plusp rate) rate))))
    (list* :ok t :wall-ns (rep-wall-ns rep) :ops (rep-ops rep) :errors (rep-errors rep)
           :msgs (rep-msgs rep)
           (append (and (rep-first-error rep) (list :first-error (rep-first-error rep)))
                   (list :cpu-user-ns (rep-cpu-user-ns rep) :cpu-system-ns (rep-cpu-system-ns rep)
                         :alloc-bytes (rep-alloc-bytes rep)
                         :latency (latency-json (rep-latency rep)))))))

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
  "The reply to one command line, as a plist."
  (handler-case
      (let ((command (if (> (length line) +max-command-length+)
                         (command-fail "a command of ~D characters; at most ~D" (length line) +max-command-length+)
                         (handler-case (parse-json line)
                           (error (e) (command-fail "not JSON: ~A" e))))))
        (unless (and (listp command) (every (lambda (e) (and (consp e) (stringp (car e)))) command))
          (command-fail "a command is a JSON object"))
        (let ((name (field command "command" #'stringp "a command name")))
          (funcall (cond ((string= name "open") #'command-open)
                         ((string= name "warm_up") #'command-warm-up)
                         ((string= name "measure") #'command-measure)
                         ((string= name "close") #'command-close)
                         ((string= name "version") #'command-version)
                         (t (command-fail "unknown command ~S (want open, warm_up, measure, close or version)"
                                          name)))
                   agent command)))
    (error (e) (list :error (princ-to-string e)))))

(defun serve-commands (in out)
  "Answer the commands on IN until its end, then close every cell."
  (let ((agent (make-agent)))
    (unwind-protect
         (loop for line = (read-line in nil)
               while line
               unless (zerop (length (string-trim '(#\Space #\Tab #\Return) line)))
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
-lisp_client: JSON commands on stdin (open, warm_up, measure, close), one JSON reply per line
on stdout, raw readings only."))
