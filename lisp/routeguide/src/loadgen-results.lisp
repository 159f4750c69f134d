;;;; The load generator's results in the repository's format: a results
;;;; file of schema grpcbench.results/v1 (go/bench/schema/results.schema.json,
;;;; the metrics named and computed as go/bench/harness names and computes
;;;; them), and the Markdown summary table of go/routeguide/loadgen.

(in-package #:routeguide)

(defun median (values)
  (let* ((sorted (sort (copy-list values) #'<))
         (n (length sorted)))
    (if (oddp n)
        (nth (floor n 2) sorted)
        (/ (+ (nth (1- (floor n 2)) sorted) (nth (floor n 2) sorted)) 2))))

(defun safe-div (a b) (if (zerop b) 0d0 (/ (float a 1d0) b)))

(defun rep-attempts (rep) (+ (rep-ops rep) (rep-errors rep)))

(defun metric (name unit better values)
  (list :name name :unit unit :better better :reps values
        :min (reduce #'min values) :median (median values) :max (reduce #'max values)))

(defun rep-metrics (reps)
  "The harness's metrics of REPS, in its order: msg_per_s only when calls
stream, server_cpu and server_cpu_per_op only when the server's CPU was
measured, cpu_pressure only where the host reports it."
  (let ((server (every #'rep-server-cpu reps))
        (pressure (every #'rep-cpu-pressure reps))
        (streams (some (lambda (r) (> (rep-msgs r) (rep-ops r))) reps)))
    (flet ((m (name unit better fn)
             (metric name unit better (mapcar (lambda (r) (float (funcall fn r) 1d0)) reps)))
           (latency (p) (lambda (r) (percentile (rep-latencies r) p))))
      (remove nil
              (list (m "wall_time" "s" "lower" #'rep-wall)
                    (m "ops" "count" "higher" #'rep-ops)
                    (m "errors" "count" "lower" #'rep-errors)
                    (m "req_per_s" "req/s" "higher" (lambda (r) (safe-div (rep-ops r) (rep-wall r))))
                    (and streams
                         (m "msg_per_s" "msg/s" "higher" (lambda (r) (safe-div (rep-msgs r) (rep-wall r)))))
                    (m "ns_per_op" "ns/op" "lower"
                       (lambda (r) (safe-div (* 1d9 (rep-wall r)) (rep-attempts r))))
                    (m "client_cpu" "s" "lower" #'rep-client-cpu)
                    (and server (m "server_cpu" "s" "lower" #'rep-server-cpu))
                    (m "total_cpu" "s" "lower"
                       (lambda (r) (+ (rep-client-cpu r) (or (rep-server-cpu r) 0))))
                    (m "client_cpu_per_op" "ns/op" "lower"
                       (lambda (r) (safe-div (* 1d9 (rep-client-cpu r)) (rep-ops r))))
                    (and server (m "server_cpu_per_op" "ns/op" "lower"
                                   (lambda (r) (safe-div (* 1d9 (rep-server-cpu r)) (rep-ops r)))))
                    (m "cpu_per_wall" "ratio" "lower"
                       (lambda (r) (safe-div (+ (rep-client-cpu r) (or (rep-server-cpu r) 0)) (rep-wall r))))
                    (m "latency_p50" "ns" "lower" (latency 50))
                    (m "latency_p90" "ns" "lower" (latency 90))
                    (m "latency_p95" "ns" "lower" (latency 95))
                    (m "latency_p99" "ns" "lower" (latency 99))
                    (m "latency_p999" "ns" "lower" (latency 999/10))
                    (m "latency_max" "ns" "lower" (latency 100))
                    (m "bytes_per_op" "B/op" "lower"
                       (lambda (r) (safe-div (rep-bytes r) (rep-attempts r))))
                    (and pressure (m "cpu_pressure" "ratio" "lower" #'rep-cpu-pressure)))))))

(defun scenario-result (name parameters reps error)
  "A result plist, status and error as harness.Result decides them."
  (let ((result (list :scenario name :parameters parameters)))
    (flet ((finish (status &optional message)
             (append result (list :status status)
                     (and message (list :error message))
                     (and reps (list :metrics (rep-metrics reps))))))
      (cond (error (finish "error" error))
            ((null reps) (finish "error" "no repetitions ran"))
            (t (loop for rep in reps
                     for i from 1
                     when (zerop (rep-ops rep))
                       do (return-from scenario-result
                            (finish "error" (format nil "rep ~D: no operation succeeded (~D failed)~@[: ~A~]"
                                                    i (rep-errors rep) (rep-first-error rep)))))
               (finish "ok" (some #'rep-first-error reps)))))))

;;; ------------------------------------------------------------------
;;; The environment fingerprint

(defun file-lines (path)
  (ignore-errors
   (with-open-file (in path)
     (loop for line = (read-line in nil) while line collect line))))

(defun proc-field (path key)
  "The value after KEY's colon in a /proc file of \"key : value\" lines."
  (loop for line in (file-lines path)
        for colon = (position #\: line)
        when (and colon (string= key (string-trim '(#\Space #\Tab) (subseq line 0 colon))))
          return (string-trim '(#\Space #\Tab) (subseq line (1+ colon)))))

(defun cpu-count ()
  (max 1 (count-if (lambda (line) (and (> (length line) 9) (string= "processor" line :end2 9)))
                   (file-lines "/proc/cpuinfo"))))

(defun utc-timestamp ()
  "Now, in RFC 3339 at UTC: when the measurement started."
  (multiple-value-bind (second minute hour day month year) (decode-universal-time (get-universal-time) 0)
    (format nil "~4,'0D-~2,'0D-~2,'0DT~2,'0D:~2,'0D:~2,'0DZ" year month day hour minute second)))

(defparameter *runtime-variables* '("GOGC" "GOMAXPROCS" "GOMEMLIMIT" "GODEBUG" "SBCL_HOME")
  "The environment variables that tune the servers' runtimes, which a
started server inherits; as go/routeguide/loadgen records them.")

(defun server-runtime ()
  "Which runtime settings a started server gets: the defaults, or the
variables set."
  (let ((set (loop for name in *runtime-variables*
                   for value = (sb-ext:posix-getenv name)
                   when value collect (format nil "~A=~A" name value))))
    (if set
        (format nil "environment ~{~A~^ ~}" set)
        "runtime defaults (GOGC, GOMAXPROCS, GOMEMLIMIT unset)")))

(defun environment (&key platform build-config revision measured-at server server-path server-args
                          rival rival-path rival-args placement)
  "The results' environment; MEASURED-AT is when the measurement started (a
UTC-TIMESTAMP), SERVER-PATH and SERVER-ARGS the server started, if any, and
RIVAL, RIVAL-PATH and RIVAL-ARGS the second server measured in turns with it
(-rival), PLACEMENT is (server-cpus client-cpus why-unpinned), as
CPU-PLACEMENT returns them.  The digests name the binaries measured, as the
Go load generator's do."
  (let ((memory (proc-field "/proc/meminfo" "MemTotal")))
    (append
     (list :cpu-model (or (proc-field "/proc/cpuinfo" "model name") "unknown")
           :cpu-count (cpu-count))
     (and memory (list :memory-bytes (* 1024 (parse-integer memory :junk-allowed t))))
     (list :kernel (format nil "Linux ~A" (or (first (file-lines "/proc/sys/kernel/osrelease")) "unknown"))
           ;; Required by the schema; this measuring binary has no Go runtime.
           :go-version "none"
           :sbcl-version (format nil "~A ~A" (lisp-implementation-type) (lisp-implementation-version))
           :platform platform
           :build-config build-config)
     (and revision (plusp (length revision)) (list :revision revision))
     (and measured-at (list :measured-at measured-at))
     (list :extra (list* :client "lisp" :server server :server-runtime (server-runtime)
                         (append
                          (digest-entry :binary-sha256 sb-ext:*runtime-pathname*)
                          (and server-path (digest-entry :server-sha256 server-path))
                          (and server-args (list :server-args (format nil "~{~A~^ ~}" server-args)))
                          (and rival (list :rival-server rival))
                          (and rival-path (digest-entry :rival-server-sha256 rival-path))
                          (and rival-args (list :rival-server-args (format nil "~{~A~^ ~}" rival-args)))
                          (destructuring-bind (server-cpus client-cpus why) placement
                            (if client-cpus
                                (list :server-cpus (format-cpu-list server-cpus)
                                      :client-cpus (format-cpu-list client-cpus))
                                (list :cpus (format nil "unpinned: ~A" why))))))))))

(defun digest-entry (key path)
  "(KEY digest) for the file at PATH, or nothing if it cannot be read."
  (let ((digest (and path (file-sha256 path))))
    (and digest (list key digest))))

;;; ------------------------------------------------------------------
;;; JSON

(defun json-key (keyword)
  (substitute #\_ #\- (string-downcase (symbol-name keyword))))

(defun write-json (value stream)
  "Plists with keyword keys are objects (keys in snake_case), other lists
arrays, strings strings, reals numbers."
  (cond ((and (consp value) (keywordp (first value)))
         (write-char #\{ stream)
         (loop for (k v) on value by #'cddr
               for first = t then nil
               do (unless first (write-char #\, stream))
                  (write-json-string (json-key k) stream)
                  (write-char #\: stream)
                  (write-json v stream))
         (write-char #\} stream))
        ((listp value)
         (write-char #\[ stream)
         (loop for v in value
               for first = t then nil
               do (unless first (write-char #\, stream))
                  (write-json v stream))
         (write-char #\] stream))
        ((stringp value) (write-json-string value stream))
        ((integerp value) (format stream "~D" value))
        ((realp value)
         (let ((x (float value 1d0)))
           (if (and (= x (ftruncate x)) (< (abs x) 1d15))
               (format stream "~D" (truncate x))
               (let ((*read-default-float-format* 'double-float))
                 (format stream "~F" x)))))
        (t (error "no JSON for ~S" value))))

(defun write-json-string (string stream)
  (write-char #\" stream)
  (loop for c across string
        do (case c
             (#\" (write-string "\\\"" stream))
             (#\\ (write-string "\\\\" stream))
             (t (if (< (char-code c) 32)
                    (format stream "\\u~4,'0X" (char-code c))
                    (write-char c stream)))))
  (write-char #\" stream))

(defun results-file (environment results &key (suite "routeguide"))
  (list :schema "grpcbench.results/v1" :suite suite :environment environment :results results))

;;; ------------------------------------------------------------------
;;; The summary table

(defun metric-median (result name)
  (let ((m (find name (getf result :metrics) :key (lambda (m) (getf m :name)) :test #'string=)))
    (and m (getf m :median))))

(defun summary-table (results stream)
  "go/routeguide/loadgen's table: median req/s, msg/s and latencies, total errors."
  (format stream "| Scenario | Status | req/s | msg/s | Errors | p50 | p90 | p99 |~%")
  (format stream "|---|---|---|---|---|---|---|---|~%")
  (dolist (r results)
    (flet ((cell (name fmt)
             (let ((v (metric-median r name))) (if v (funcall fmt v) "-"))))
      (format stream "| ~A | ~A | ~A | ~A | ~A | ~A | ~A | ~A |~%"
              (getf r :scenario)
              (if (string= (getf r :status) "ok")
                  "ok"
                  (substitute #\/ #\| (format nil "error: ~A" (getf r :error))))
              (cell "req_per_s" (lambda (v) (format nil "~:D" (round v))))
              (cell "msg_per_s" (lambda (v) (format nil "~:D" (round v))))
              (let ((m (find "errors" (getf r :metrics) :key (lambda (m) (getf m :name)) :test #'string=)))
                (if m (format nil "~D" (round (reduce #'+ (getf m :reps)))) "-"))
              (cell "latency_p50" (lambda (v) (format-ns (round v))))
              (cell "latency_p90" (lambda (v) (format-ns (round v))))
              (cell "latency_p99" (lambda (v) (format-ns (round v))))))))
