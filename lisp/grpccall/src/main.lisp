;;;; grpccall: calls one method of a gRPC server with clgrpc's client, so
;;;; that tests (go/features) and people can see what the client does
;;;; against any server: its service config, deadlines, wait-for-ready,
;;;; metadata, keepalive, and the telemetry interceptors: -trace sends W3C
;;;; traceparent, and -metrics_out writes gRPC's client metrics, in
;;;; Prometheus' text format, to FILE once the calls are made.  Messages are raw octets: the request is -request's hex, and
;;;; a streaming request sends it -messages times.
;;;;
;;;;   grpccall {-addr HOST:PORT | -target TARGET [-lb_policy POLICY]}
;;;;            -method /package.Service/Method [-interval DURATION]
;;;;            [-kind unary|client_streaming] [-calls N] [-messages N]
;;;;            [-request HEX] [-service_config JSON] [-timeout DURATION]
;;;;            [-wait_for_ready] [-metadata NAME=VALUE,...]
;;;;            [-keepalive_time DURATION] [-keepalive_timeout DURATION]
;;;;            [-keepalive_without_calls] [-trace] [-metrics_out FILE]
;;;;
;;;; Each call prints one line of JSON on stdout: {"call": i, "code": "OK",
;;;; "message": "...", "response": "HEX", "ms": elapsed, "details": [...]},
;;;; the details being a rich error's, each {"type_url": ..., "value": HEX}.  The exit code is
;;;; 0 when the calls were made (whatever their statuses), 2 on a bad
;;;; command line or service config.

(in-package #:grpccall)

(defparameter *flags*
  (list (flag-spec "addr" :string "127.0.0.1:10000" "the server's `host:port`")
        (flag-spec "target" :string "" "a gRPC `target` (dns:///host:port, ipv4:..., ipv6:..., unix:path) instead of -addr")
        (flag-spec "lb_policy" :string "" "how -target's addresses are picked: pick_first or round_robin (empty: as -service_config's loadBalancingConfig says, else pick_first)")
        (flag-spec "interval" :duration 0 "pause between calls")
        (flag-spec "method" :string "" "the method's `path`, /package.Service/Method")
        (flag-spec "kind" :string "unary" "the method's kind: unary or client_streaming")
        (flag-spec "calls" :int 1 "calls made one after another")
        (flag-spec "messages" :int 1 "request messages of a client_streaming call")
        (flag-spec "request" :string "" "the request message's octets in `hex`")
        (flag-spec "service_config" :string "" "the channel's service config, in `JSON`")
        (flag-spec "timeout" :duration 0 "each call's deadline (0: none)")
        (flag-spec "wait_for_ready" :bool nil "calls wait for a connection instead of failing")
        (flag-spec "metadata" :string "" "request metadata, `NAME=VALUE,...`")
        (flag-spec "keepalive_time" :duration 0 "ping the server after this long without hearing from it (0: never; at least 10s)")
        (flag-spec "keepalive_timeout" :duration 20 "close the connection if a ping is not answered within this")
        (flag-spec "keepalive_without_calls" :bool nil "ping even while no call is open")
        (flag-spec "trace" :bool nil "send W3C trace context (traceparent) with each call")
        (flag-spec "metrics_out" :string "" "write the client's gRPC metrics, Prometheus text, to this `file`")))

(defun parse-hex (text)
  (unless (and (evenp (length text)) (every (lambda (c) (digit-char-p c 16)) text))
    (flag-fail "-request ~S is not hex" text))
  (let ((octets (make-array (/ (length text) 2) :element-type '(unsigned-byte 8))))
    (dotimes (i (length octets) octets)
      (setf (aref octets i) (parse-integer text :start (* 2 i) :end (+ 2 (* 2 i)) :radix 16)))))

(defun parse-metadata (text)
  (loop for entry in (if (string= text "") '() (split text #\,))
        collect (let ((eq (position #\= entry)))
                  (unless (and eq (plusp eq))
                    (flag-fail "-metadata entry ~S is not NAME=VALUE" entry))
                  (cons (subseq entry 0 eq) (subseq entry (1+ eq))))))

(defun split (text char)
  (loop for start = 0 then (1+ end)
        for end = (position char text :start start)
        collect (subseq text start end)
        while end))

(defun hex (octets)
  (format nil "~(~{~2,'0x~}~)" (coerce octets 'list)))

(defun call-once (channel options request metadata)
  "One call as OPTIONS say: (values code message response-octets details)."
  (let ((path (getf options :method))
        (timeout (let ((s (getf options :timeout))) (and (plusp s) s)))
        (wait (if (getf options :wait-for-ready) t nil)))
    (handler-case
        (values clgrpc.grpc:+ok+ ""
                (if (string= (getf options :kind) "unary")
                    (clgrpc.grpc:unary-call channel path request :timeout timeout :metadata metadata
                                                                 :wait-for-ready wait)
                    (let ((call (clgrpc.grpc:client-streaming-call channel path :timeout timeout
                                                                                :metadata metadata
                                                                                :wait-for-ready wait)))
                      (dotimes (i (getf options :messages))
                        (clgrpc.grpc:call-send call request))
                      (clgrpc.grpc:call-close-and-recv call))))
      (clgrpc.grpc:grpc-error (e)
        (values (clgrpc.grpc:grpc-error-code e) (clgrpc.grpc:grpc-error-message e) nil
                (clgrpc.grpc:grpc-error-details e))))))

(defun check-options (options rest)
  (when rest
    (flag-fail "unexpected arguments: [~{~S~^ ~}]" rest))
  (unless (and (plusp (length (getf options :method))) (char= #\/ (char (getf options :method) 0)))
    (flag-fail "-method ~S is not /package.Service/Method" (getf options :method)))
  (unless (member (getf options :lb-policy) '("" "pick_first" "round_robin") :test #'string=)
    (flag-fail "-lb_policy ~S is not pick_first or round_robin" (getf options :lb-policy)))
  (when (minusp (getf options :interval))
    (flag-fail "-interval must not be negative"))
  (unless (member (getf options :kind) '("unary" "client_streaming") :test #'string=)
    (flag-fail "-kind ~S is not unary or client_streaming" (getf options :kind)))
  (unless (and (plusp (getf options :calls)) (not (minusp (getf options :messages))))
    (flag-fail "-calls must be positive and -messages not negative"))
  (when (minusp (getf options :timeout))
    (flag-fail "-timeout must not be negative"))
  (when (or (minusp (getf options :keepalive-time)) (not (plusp (getf options :keepalive-timeout))))
    (flag-fail "-keepalive_time must not be negative, and -keepalive_timeout must be positive"))
  (let ((config (getf options :service-config)))
    (and (plusp (length config))
         (handler-case (clgrpc.grpc:parse-service-config config)
           (clgrpc.grpc:service-config-error (e) (flag-fail "-service_config: ~A" e))))))

(defun open-channel (options config registry)
  "The channel OPTIONS describe, with the telemetry interceptors they ask
for (REGISTRY records the metrics)."
  (let ((keys (list :service-config config
                    :interceptors (append (and registry (list (clgrpc.telemetry:client-metrics-interceptor registry)))
                                          (and (getf options :trace) (list (clgrpc.telemetry:client-tracing-interceptor))))
                    :keepalive-time (let ((s (getf options :keepalive-time))) (and (plusp s) s))
                    :keepalive-timeout (getf options :keepalive-timeout)
                    :keepalive-without-calls (getf options :keepalive-without-calls)))
        (target (getf options :target)))
    (if (plusp (length target))
        (handler-case (apply #'clgrpc.grpc:make-target-channel target
                             :lb-policy (cdr (assoc (getf options :lb-policy)
                                                    '(("round_robin" . :round-robin) ("pick_first" . :pick-first))
                                                    :test #'string=))
                             keys)
          (clgrpc.grpc:target-error (e) (flag-fail "-target: ~A" e)))
        (multiple-value-bind (host port) (split-host-port (getf options :addr))
          (apply #'clgrpc.grpc:make-channel host port keys)))))

(defun print-outcome (i code message response details start)
  (clgrpc.util:write-json
   (list :call i :code (clgrpc.grpc:status-code-name code) :message message
         :response (hex (or response #()))
         :ms (round (* 1000 (- (get-internal-real-time) start)) internal-time-units-per-second)
         :details (mapcar (lambda (d)
                            (list :type-url (clgrpc.grpc:status-detail-type-url d)
                                  :value (hex (clgrpc.grpc:status-detail-value d))))
                          details))
   *standard-output*)
  (terpri)
  (finish-output))

(defun main ()
  "Entry point of the grpccall executable; returns the exit code."
  (call-with-command-line
   *flags* (rest sb-ext:*posix-argv*)
   (lambda (options rest given)
     (declare (ignore given))
     (let* ((config (check-options options rest))
            (request (parse-hex (getf options :request)))
            (metadata (parse-metadata (getf options :metadata)))
            (metrics-out (getf options :metrics-out))
            (registry (and (plusp (length metrics-out)) (clgrpc.telemetry:make-registry)))
            (channel (open-channel options config registry)))
       (unwind-protect
            (dotimes (i (getf options :calls) 0)
              (let ((start (get-internal-real-time)))
                (multiple-value-bind (code message response details)
                    (call-once channel options request metadata)
                  (print-outcome i code message response details start))
                (when (plusp (getf options :interval))
                  (sleep (getf options :interval)))))
         (clgrpc.grpc:channel-close channel)
         (when registry
           (with-open-file (out metrics-out :direction :output :if-exists :supersede)
             (write-string (clgrpc.telemetry:prometheus-text registry) out))))))
   :description "Calls one gRPC method with clgrpc's client, raw octets in and out, and prints
each call's status as a line of JSON."))
