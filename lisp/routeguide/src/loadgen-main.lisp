;;;; The Lisp RouteGuide load generator, with the command line and the
;;;; results of go/routeguide/loadgen, so that the RouteGuide matrix can put the
;;;; Lisp client where the Go one is:
;;;;
;;;;   loadgen (-server PATH [-server_args ARGS] | -addr HOST:PORT) [-impl LABEL] [-rpcs LIST]
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

(defun measure-one (options scenario host port workload process name parameters)
  "The result of SCENARIO, (kind . clients); whatever goes wrong becomes an
error result, so the run goes on with the next scenario."
  (handler-case
      (let ((reps (measure-scenario :host host :port port :kind (car scenario) :clients (cdr scenario)
                                    :mode (getf options :conns) :workload workload
                                    :duration (getf options :duration)
                                    :reps (getf options :reps) :warmup (getf options :warmup)
                                    :server-pid (and process (sb-ext:process-pid process))
                                    :rate (and (plusp (getf options :rate)) (getf options :rate))
                                    :progress *error-output*)))
        ;; Calls fail once the server is gone, but a crash late in a
        ;; repetition could leave too few failures to notice.
        (scenario-result name parameters reps
                         (and process (not (sb-ext:process-alive-p process))
                              "server exited unexpectedly")))
    (error (e) (scenario-result name parameters nil (princ-to-string e)))))

(defun run-loadgen (options)
  "Measure every scenario; returns the exit code."
  (let* ((server-path (and (plusp (length (getf options :server))) (getf options :server)))
         (server-args (remove "" (split-on #\Space (getf options :server-args)) :test #'string=))
         (impl (getf options :impl))
         (placement (multiple-value-list (cpu-placement (getf options :cpus) server-path)))
         (rate (and (plusp (getf options :rate)) (getf options :rate)))
         ;; An open loop measures latency at an offered rate: a suite of its own.
         (suite (if rate "routeguide_openloop" "routeguide"))
         (workload (make-workload (getf options :stream-msgs)))
         (process nil) host port
         (measured-at (utc-timestamp))
         (results '())
         (scenarios (loop for kind in (getf options :kinds)
                          append (loop for n in (getf options :clients) collect (cons kind n)))))
    (flet ((name (s) (format nil "~A/~A/clients=~D~:[~;/rate=~:*~D~]/client=lisp" impl (car s) (cdr s) rate))
           (parameters (s)
             (append (list :impl impl :rpc (car s) :clients (cdr s)
                           :duration (format-duration (getf options :duration))
                           :conns (getf options :conns) :stream-msgs (msgs-per-call workload (car s))
                           :client "lisp")
                     (and rate (list :rate rate)))))
      (let ((start-error
              (handler-case
                  (progn
                    (destructuring-bind (server-cpus client-cpus why) placement
                      (declare (ignore server-cpus why))
                      (when (and client-cpus (not (pin-process client-cpus)))
                        (format *error-output* "[routeguide] running unpinned: cannot bind to CPUs ~A~%"
                                (format-cpu-list client-cpus))
                        (setf placement (list nil nil "binding this process to its CPUs failed"))))
                    (if server-path
                        (multiple-value-setq (process host port)
                          (start-server-process server-path (first placement) server-args))
                        (multiple-value-setq (host port) (split-host-port (getf options :addr))))
                    (when process
                      (format *error-output* "[routeguide] server ~A (pid ~D) listening on ~A:~D~%"
                              server-path (sb-ext:process-pid process) host port))
                    nil)
                (error (e) (format nil "starting ~A: ~A" server-path e)))))
        (dolist (s scenarios)
          (format *error-output* "[routeguide] ~A~%" (name s))
          (finish-output *error-output*)
          (push (cond (start-error (scenario-result (name s) (parameters s) nil start-error))
                      ((and process (not (sb-ext:process-alive-p process)))
                       (scenario-result (name s) (parameters s) nil
                                        (format nil "not run: server exited unexpectedly (status ~A)"
                                                (sb-ext:process-exit-code process))))
                      (t (measure-one options s host port workload process (name s) (parameters s))))
                results)))
      (when process
        (let ((complaint (stop-server-process process)))
          (when complaint (format *error-output* "[routeguide] ~A~%" complaint)))))
    (setf results (nreverse results))
    (let ((code 0)
          (environment (environment :platform (getf options :platform)
                                    :build-config (getf options :build-config)
                                    :revision (getf options :revision)
                                    :measured-at measured-at
                                    :server (if server-path
                                                (format nil "~A server ~A" impl
                                                        (subseq server-path (1+ (or (position #\/ server-path :from-end t) -1))))
                                                "external, at -addr")
                                    :server-path server-path :server-args server-args
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
