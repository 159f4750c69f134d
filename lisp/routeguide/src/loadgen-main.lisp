;;;; The Lisp RouteGuide load generator, with the command line and the
;;;; results of go/routeguide/loadgen, so that the RouteGuide matrix can put the
;;;; Lisp client where the Go one is:
;;;;
;;;;   loadgen (-server PATH [-server_args ARGS] [-rival PATH -rival_impl LABEL
;;;;           [-rival_args ARGS]] | -addr HOST:PORT) [-impl LABEL] [-rpcs LIST]
;;;;           [-clients 1,10,100] [-duration 5s] [-conns per-client|shared]
;;;;           [-stream_msgs 10] [-reps 3] [-warmup 1s|500|0] [-out FILE]
;;;;           [-benchfmt FILE] [-cpus auto|off|SERVER/CLIENT] [-rate N] ...
;;;;
;;;; With -server it starts PATH -addr 127.0.0.1:0, waits for its
;;;; "listening on HOST:PORT" line, measures, and stops it (SIGTERM).
;;;; Progress goes to stderr, the table to stdout, results JSON to -out, the
;;;; Go benchmark format to -benchfmt.  Scenarios are named
;;;; IMPL/KIND/clients=N/client=lisp: the Go loadgen's names plus the client,
;;;; so that a report can merge the results of both clients.
;;;; Exit 0 when every scenario succeeded, 1 otherwise, 2 on a bad command
;;;; line.

(in-package #:routeguide)

(defun default-platform ()
  (format nil "linux_~A" (if (search "ARM64" (machine-type)) "arm64" "amd64")))

(defparameter *loadgen-flags*
  (list (flag-spec "server" :string "" "RouteGuide server `executable` to start with -addr 127.0.0.1:0 (its CPU time is measured too)")
        (flag-spec "server_args" :string "" "space-separated extra `arguments` for the -server started, such as a tuning flag; recorded in the results")
        (flag-spec "rival" :string "" "a second RouteGuide server `executable`, started beside -server and measured in the same scenarios, the two taking turns repetition by repetition so that both see the same machine")
        (flag-spec "rival_impl" :string "" "the -rival server's implementation `label`, other than -impl's")
        (flag-spec "rival_args" :string "" "space-separated extra `arguments` for the -rival server")
        (flag-spec "addr" :string "" "`host:port` of a running RouteGuide server on a loopback address, instead of -server")
        (flag-spec "impl" :string "go" "server implementation `label` recorded in the results (go, lisp)")
        (flag-spec "rpcs" :string "unary,server_streaming,client_streaming,bidi"
                   "comma `list` of RPC kinds: unary, server_streaming, client_streaming, bidi")
        (flag-spec "clients" :string "1,10,100" "comma `list` of concurrent client counts, one scenario each")
        (flag-spec "duration" :duration 5 "measured time per repetition")
        (flag-spec "conns" :string "per-client"
                   "connection `mode`: per-client (each client its own HTTP/2 connection) or shared (all clients multiplex one)")
        (flag-spec "cpus" :string "auto"
                   "CPU `placement`: auto (with -server and 2 or more CPUs, the server on the first half and this load generator on the rest), off (both share every CPU), or SERVER/CLIENT CPU lists such as 0/1")
        (flag-spec "rate" :int 0
                   "if positive, an open loop: `requests/s` offered in all, on a fixed schedule, each latency measured from when its request was due (no coordinated omission); the clients bound how many are in flight")
        (flag-spec "stream_msgs" :int 10
                   "points per RecordRoute call and notes per RouteChat call (ListFeatures always streams the standard database's 100 features)")
        (flag-spec "out" :string "" "write the results `file` (JSON, schema grpcbench.results/v1); if empty, only print the table")
        (flag-spec "benchfmt" :string "" "also write the results in Go benchmark format to `file`, for benchstat")
        (flag-spec "reps" :int 3 "measured repetitions per scenario")
        (flag-spec "warmup" :string "1s" "unmeasured warm-up before each scenario: an operation count (500), a duration (2s) or 0")
        (flag-spec "platform" :string (default-platform) "platform to record, GOOS_GOARCH")
        (flag-spec "build_config" :string "dev" "build configuration to record (fastbuild, opt, dbg)")
        (flag-spec "revision" :string "" "source revision to record, when stamped")))

(defun split-list (flag text)
  (let ((items (mapcar (lambda (s) (string-trim " " s)) (split-on #\, text))))
    (when (some (lambda (s) (zerop (length s))) items)
      (flag-fail "-~A: empty item in ~S" flag text))
    (unless (= (length items) (length (remove-duplicates items :test #'string=)))
      (flag-fail "-~A: an item is given twice in ~S" flag text))
    items))

(defun split-on (char string)
  (loop with start = 0
        for end = (position char string :start start)
        collect (subseq string start end)
        while end
        do (setf start (1+ end))))

(defun loopback-host-p (host)
  (or (string= host "localhost") (string= host "::1")
      (and (> (length host) 4) (string= "127." host :end2 4))))

(defun check-loadgen-options (options rest)
  (let ((server (getf options :server))
        (addr (getf options :addr)))
    (when rest (flag-fail "unexpected arguments: [~{~S~^ ~}]" rest))
    (when (eq (zerop (length server)) (zerop (length addr)))
      (flag-fail "exactly one of -server and -addr is required"))
    (when (and (zerop (length server)) (plusp (length (getf options :server-args))))
      (flag-fail "-server_args needs -server"))
    (let ((rival (getf options :rival)) (rival-impl (getf options :rival-impl)))
      (cond ((zerop (length rival))
             (when (or (plusp (length rival-impl)) (plusp (length (getf options :rival-args))))
               (flag-fail "-rival_impl and -rival_args need -rival")))
            ((zerop (length server)) (flag-fail "-rival needs -server"))
            ((or (zerop (length rival-impl))
                 (notevery (lambda (c) (or (alphanumericp c) (find c "_.-"))) rival-impl))
             (flag-fail "-rival_impl ~S: want letters, digits, '_', '.' or '-'" rival-impl))
            ((string= rival-impl (getf options :impl))
             (flag-fail "-rival_impl ~S is -impl's too: each server needs a label of its own" rival-impl))))
    (when (plusp (length addr))
      (unless (loopback-host-p (split-host-port addr))
        (flag-fail "-addr: ~A is not a loopback address" addr)))
    (unless (every (lambda (c) (or (alphanumericp c) (find c "_.-"))) (getf options :impl))
      (flag-fail "-impl ~S: want letters, digits, '_', '.' or '-'" (getf options :impl)))
    (let ((kinds (mapcar (lambda (k)
                           (cond ((string= k "bidi") "bidi_streaming")
                                 ((member k *rpc-kinds* :test #'string=) k)
                                 (t (flag-fail "-rpcs: unknown RPC kind ~S (want unary, server_streaming, client_streaming or bidi)" k))))
                         (split-list "rpcs" (getf options :rpcs))))
          (clients (mapcar (lambda (c)
                             (let ((n (ignore-errors (parse-integer c))))
                               (unless (and n (<= 1 n 10000))
                                 (flag-fail "-clients: ~S is not a client count from 1 to 10000" c))
                               n))
                           (split-list "clients" (getf options :clients))))
          (warmup (let ((w (getf options :warmup)))
                    (cond ((every #'digit-char-p w) (let ((n (parse-integer w))) (and (plusp n) n)))
                          ((parse-duration w))
                          (t (flag-fail "-warmup ~S: want an operation count, a duration or 0" w))))))
      (unless (plusp (getf options :duration)) (flag-fail "-duration must be positive"))
      (unless (member (getf options :conns) '("per-client" "shared") :test #'string=)
        (flag-fail "-conns ~S: want per-client or shared" (getf options :conns)))
      (when (minusp (getf options :rate))
        (flag-fail "-rate must not be negative, got ~D" (getf options :rate)))
      (unless (parse-cpus-flag (getf options :cpus))
        (flag-fail "-cpus ~S: want auto, off or SERVER/CLIENT as two disjoint CPU lists such as 0/1"
                   (getf options :cpus)))
      (unless (<= 1 (getf options :stream-msgs) 100000)
        (flag-fail "-stream_msgs must be from 1 to 100000, got ~D" (getf options :stream-msgs)))
      (unless (plusp (getf options :reps)) (flag-fail "-reps must be at least 1, got ~D" (getf options :reps)))
      (list* :kinds (remove-duplicates kinds :test #'string= :from-end t) :clients clients
             :warmup warmup options))))

;;; ------------------------------------------------------------------
;;; The server process

(defun start-server-process (path cpus args)
  "Run PATH -addr 127.0.0.1:0 ARGS... on CPUS (NIL: any); returns (values
process host port) once it prints \"listening on HOST:PORT\", within 30 s
(SBCL servers may be decompressing a core, or running under qemu)."
  (let* ((process (call-with-thread-cpus
                   cpus (lambda ()
                          (sb-ext:run-program path (list* "-addr" "127.0.0.1:0" args)
                                              :output :stream :error sb-sys:*stderr* :wait nil))))
         (reader (sb-thread:make-thread
                  (lambda () (read-line (sb-ext:process-output process) nil nil))
                  :name "server stdout"))
         (line (sb-thread:join-thread reader :default nil :timeout 30))
         (prefix "listening on "))
    (unless (and (stringp line) (> (length line) (length prefix))
                 (string= prefix line :end2 (length prefix)))
      (stop-server-process process)
      (error "~A printed no \"listening on HOST:PORT\" line within 30 s (got ~S)" path line))
    ;; Whatever else it prints goes to our stderr; an unread pipe could
    ;; fill and block it.
    (sb-thread:make-thread (lambda ()
                             (ignore-errors
                              (loop for l = (read-line (sb-ext:process-output process) nil)
                                    while l do (format *error-output* "~A~%" l))))
                           :name "server stdout copy")
    (multiple-value-bind (host port) (split-host-port (string-trim '(#\Return) (subseq line (length prefix))))
      (values process host port))))

(defun stop-server-process (process)
  "SIGTERM, then SIGKILL after 10 s; returns NIL or a complaint."
  (prog1 (when (sb-ext:process-alive-p process)
           (sb-ext:process-kill process sb-unix:sigterm)
           (loop repeat 200 while (sb-ext:process-alive-p process) do (sleep 0.05))
           (when (sb-ext:process-alive-p process)
             (sb-ext:process-kill process sb-unix:sigkill)
             "server did not stop within 10 s of SIGTERM; killed it"))
    (sb-ext:process-wait process)))

;;; ------------------------------------------------------------------

;;; A server measured: its label, executable and arguments (NIL path: the one
;;; at -addr), and once started its process and address.
(defstruct (target (:constructor make-target (impl path args)))
  impl path args process host port)

(defun loadgen-targets (options)
  "The servers to measure: -server (or -addr), then -rival if given."
  (flet ((words (text) (remove "" (split-on #\Space text) :test #'string=)))
    (let ((server (getf options :server)))
      (cons (make-target (getf options :impl) (and (plusp (length server)) server)
                         (words (getf options :server-args)))
            (and (plusp (length (getf options :rival)))
                 (list (make-target (getf options :rival-impl) (getf options :rival)
                                    (words (getf options :rival-args)))))))))

(defun start-target (target cpus options)
  "Start TARGET's server on CPUS (or take -addr's address)."
  (if (target-path target)
      (multiple-value-bind (process host port)
          (start-server-process (target-path target) cpus (target-args target))
        (setf (target-process target) process (target-host target) host (target-port target) port)
        (format *error-output* "[routeguide] ~A server ~A (pid ~D) listening on ~A:~D~%"
                (target-impl target) (target-path target) (sb-ext:process-pid process) host port))
      (multiple-value-bind (host port) (split-host-port (getf options :addr))
        (setf (target-host target) host (target-port target) port))))

(defun target-gone (target)
  "Why TARGET's server can take no more calls, or NIL."
  (let ((process (target-process target)))
    (and process (not (sb-ext:process-alive-p process))
         (format nil "server exited unexpectedly (status ~A)" (sb-ext:process-exit-code process)))))

(defun measure-in-turns (options scenario targets workload name-of parameters-of)
  "The results of SCENARIO, (kind . clients), against each of TARGETS, in
their order.  With more than one, the servers take turns, one repetition
each per round and the first turn rotating, as the Go load generator's do:
load that comes and goes on the machine then falls on all of them alike.
Whatever goes wrong becomes an error result, so the run goes on."
  (let* ((n (length targets))
         (reps (getf options :reps))
         (rate (and (plusp (getf options :rate)) (getf options :rate)))
         (cells (make-array n :initial-element nil))
         (done (make-array n :initial-element nil))
         (errors (make-array n :initial-element nil)))
    (loop for target in targets for i from 0
          do (setf (aref errors i)
                   (let ((gone (target-gone target)))
                     (if gone
                         (format nil "not run: ~A" gone)
                         (handler-case
                             (progn (setf (aref cells i)
                                          (open-cell :host (target-host target) :port (target-port target)
                                                     :kind (car scenario) :clients (cdr scenario)
                                                     :mode (getf options :conns)))
                                    nil)
                           (error (e) (princ-to-string e)))))))
    (unwind-protect
         (flet ((turn (i count label)
                  (unless (aref errors i)
                    (let ((target (nth i targets)))
                      (handler-case
                          (setf (aref done i)
                                (append (aref done i)
                                        (cell-reps (aref cells i)
                                                   :label label :workload workload
                                                   :duration (getf options :duration) :reps count
                                                   :warmup (getf options :warmup)
                                                   :server-pid (and (target-process target)
                                                                    (sb-ext:process-pid (target-process target)))
                                                   :rate rate :progress *error-output*)))
                        (error (e) (setf (aref errors i) (princ-to-string e))))
                      ;; Calls fail once the server is gone, but a crash late in
                      ;; a repetition could leave too few failures to notice.
                      (unless (aref errors i)
                        (setf (aref errors i) (target-gone target)))))))
           (if (= n 1)
               (turn 0 reps (car scenario))
               (dotimes (round reps)
                 (dotimes (k n)
                   (let ((i (mod (+ k round) n)))
                     (turn i 1 (format nil "~A, round ~D/~D"
                                       (funcall name-of scenario (nth i targets)) (1+ round) reps)))))))
      (loop for cell across cells when cell do (close-cell cell)))
    (loop for target in targets for i from 0
          collect (scenario-result (funcall name-of scenario target) (funcall parameters-of scenario target)
                                   (aref done i) (aref errors i)))))

(defun target-description (target)
  (let ((path (target-path target)))
    (if path
        (format nil "~A server ~A" (target-impl target)
                (subseq path (1+ (or (position #\/ path :from-end t) -1))))
        "external, at -addr")))

(defun run-loadgen (options)
  "Measure every scenario; returns the exit code."
  (let* ((targets (loadgen-targets options))
         (placement (multiple-value-list (cpu-placement (getf options :cpus) (target-path (first targets)))))
         (rate (and (plusp (getf options :rate)) (getf options :rate)))
         ;; An open loop measures latency at an offered rate: a suite of its own.
         (suite (if rate "routeguide_openloop" "routeguide"))
         (workload (make-workload (getf options :stream-msgs)))
         (measured-at (utc-timestamp))
         (results '())
         (scenarios (loop for kind in (getf options :kinds)
                          append (loop for n in (getf options :clients) collect (cons kind n)))))
    (flet ((name (s target)
             (format nil "~A/~A/clients=~D~:[~;/rate=~:*~D~]/client=lisp" (target-impl target) (car s) (cdr s) rate))
           (parameters (s target)
             (append (list :impl (target-impl target) :rpc (car s) :clients (cdr s)
                           :duration (format-duration (getf options :duration))
                           :conns (getf options :conns) :stream-msgs (msgs-per-call workload (car s))
                           :client "lisp")
                     (and rate (list :rate rate)))))
      (unwind-protect
           (let ((start-error
                   (let ((target nil))
                     (handler-case
                         (progn
                           (destructuring-bind (server-cpus client-cpus why) placement
                             (declare (ignore server-cpus why))
                             (when (and client-cpus (not (pin-process client-cpus)))
                               (format *error-output* "[routeguide] running unpinned: cannot bind to CPUs ~A~%"
                                       (format-cpu-list client-cpus))
                               (setf placement (list nil nil "binding this process to its CPUs failed"))))
                           (dolist (tg targets)
                             (setf target tg)
                             (start-target tg (first placement) options))
                           nil)
                       (error (e) (format nil "starting ~A: ~A" (and target (target-path target)) e))))))
             (dolist (s scenarios)
               (format *error-output* "[routeguide] ~{~A~^, ~}~%" (mapcar (lambda (tg) (name s tg)) targets))
               (finish-output *error-output*)
               (setf results
                     (append results
                             (if start-error
                                 (mapcar (lambda (tg) (scenario-result (name s tg) (parameters s tg) nil start-error))
                                         targets)
                                 (measure-in-turns options s targets workload #'name #'parameters))))))
        (dolist (tg targets)
          (when (target-process tg)
            (let ((complaint (stop-server-process (target-process tg))))
              (when complaint (format *error-output* "[routeguide] ~A~%" complaint)))))))
    (let* ((code 0)
           (server (first targets))
           (rival (second targets))
           (environment (environment :platform (getf options :platform)
                                     :build-config (getf options :build-config)
                                     :revision (getf options :revision)
                                     :measured-at measured-at
                                     :server (target-description server)
                                     :server-path (target-path server) :server-args (target-args server)
                                     :rival (and rival (target-description rival))
                                     :rival-path (and rival (target-path rival))
                                     :rival-args (and rival (target-args rival))
                                     :placement placement)))
      (flet ((emit (flag writer)
               (let ((path (getf options flag)))
                 (when (plusp (length path))
                   (handler-case
                       (with-open-file (stream path :direction :output :if-exists :supersede
                                                    :external-format :utf-8)
                         (funcall writer stream))
                     (error (e)
                       (format *error-output* "[routeguide] writing ~A: ~A~%" path e)
                       (setf code 1)))))))
        (emit :out (lambda (stream)
                     (write-json (results-file environment results :suite suite) stream)
                     (terpri stream)))
        (emit :benchfmt (lambda (stream) (write-benchfmt environment results stream :suite suite))))
      (format t "~%### Scenarios~%~%")
      (summary-table results *standard-output*)
      (dolist (r results)
        (unless (string= (getf r :status) "ok")
          (format *error-output* "routeguide: ~A failed: ~A~%" (getf r :scenario) (getf r :error))
          (setf code 1)))
      (finish-output)
      code)))

(defun loadgen-main ()
  "Entry point of the load generator executable; returns the exit code."
  (call-with-command-line
   *loadgen-flags* (rest sb-ext:*posix-argv*)
   (lambda (options rest given)
     (declare (ignore given))
     (run-loadgen (check-loadgen-options options rest)))
   :synopsis "(-server PATH | -addr HOST:PORT) [flags]"
   :description "Measures a RouteGuide server with unary, server-streaming, client-streaming
and bidi calls at several client counts, over loopback TCP, with the Lisp
client (clgrpc). Progress goes to stderr, a table to stdout, results to -out,
the Go benchmark format to -benchfmt."))
