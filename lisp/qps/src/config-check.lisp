;;;; What of a ServerConfig or ClientConfig this worker honours, and the
;;;; INVALID_ARGUMENT, naming the field, for everything else: a worker that
;;;; silently ran something other than the scenario would give a figure
;;;; for the wrong benchmark.
;;;;
;;;; Honoured: the RPC type (all but STREAMING_BOTH_WAYS, for which gRPC's
;;;; clients define no measurement), outstanding_rpcs_per_channel,
;;;; client_channels, closed-loop and Poisson load, simple payload sizes,
;;;; messages_per_stream, core_limit and core_list, histogram_params, a
;;;; server's port, and its server_type: SYNC_SERVER runs each streaming
;;;; call's handler on a thread that waits for its messages (gRPC C++'s
;;;; synchronous API); ASYNC_SERVER and CALLBACK_SERVER call the ping-pong
;;;; handlers per message, holding no thread between messages (clgrpc's
;;;; :EACH-MESSAGE, the counterpart of their event-driven APIs).
;;;;
;;;; Accepted without effect, and logged: client_type (SYNC, ASYNC and
;;;; CALLBACK name gRPC C++'s APIs; clgrpc has one way to make calls),
;;;; async_client_threads, async_server_threads and
;;;; threads_per_cq (gRPC C++'s completion-queue threads; clgrpc has none),
;;;; and the channel argument grpc.optimization_target (a C-core hint).
;;;;
;;;; Refused: security_params (no TLS yet), byte-buffer and complex
;;;; payloads, the generic server, other channel_args, other_client_api,
;;;; other_server_api, resource_quota_size, use_coalesce_api, median
;;;; latency collection, and more than one client or server process.

(in-package #:qps)

(defconstant +max-client-calls+ 1000
  "The most calls one client runs at once (client_channels times
outstanding_rpcs_per_channel): each has a thread of its own.")

(defun invalid (field format-control &rest args)
  "Refuse the configuration: INVALID_ARGUMENT naming FIELD."
  (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+invalid-argument+ "~A: ~?" field format-control args))

(defun enum-name (value)
  "An enum value as the protocol spells it: :STREAMING-FROM-CLIENT as
STREAMING_FROM_CLIENT (an unknown number as itself)."
  (if (keywordp value) (substitute #\_ #\- (symbol-name value)) (princ-to-string value)))

(defconstant +max-payload+ (- 4194304 1024)
  "The largest payload a benchmark may ask for: what fits, with its framing,
in the 4 MiB that clgrpc and grpc-go receive by default.  A larger one would
make every call fail, a benchmark of nothing but errors.")

(defun check-histogram-params (params)
  "(values resolution max-possible), gRPC's defaults for zeros."
  (let ((resolution (if params (histogram-params-resolution params) 0d0))
        (max-possible (if params (histogram-params-max-possible params) 0d0)))
    (when (zerop resolution) (setf resolution 0.01d0))
    (when (zerop max-possible) (setf max-possible 60d9))
    ;; Written so that a NaN fails the test; max_possible below 1 would
    ;; leave no bucket.
    (unless (and (< 0 resolution 1d3) (<= 1 max-possible) (< resolution max-possible) (< max-possible 1d300))
      (invalid "client_config.histogram_params" "resolution ~A and max_possible ~A are not a histogram (need resolution > 0 and max_possible >= 1)"
               resolution max-possible))
    (let ((n (histogram-bucket-count resolution max-possible)))
      (when (> n +max-histogram-buckets+)
        (invalid "client_config.histogram_params" "~D buckets; this worker keeps at most ~D" n +max-histogram-buckets+)))
    (values resolution max-possible)))

(defun check-payload-config (prefix config)
  "(values request-size response-size) of a simple payload (0 and 0 when
there is none)."
  (flet ((field (name) (format nil "~A.payload_config.~A" prefix name)))
    (cond ((null config) (values 0 0))
          ((payload-config-simple-params config)
           (let* ((p (payload-config-simple-params config))
                  (req (simple-proto-params-req-size p))
                  (resp (simple-proto-params-resp-size p)))
             (loop for (name size) in (list (list "req_size" req) (list "resp_size" resp))
                   unless (<= 0 size +max-payload+)
                     do (invalid (field (format nil "simple_params.~A" name))
                                 "~D octets; from 0 to ~D" size +max-payload+))
             (values req resp)))
          ((payload-config-bytebuf-params config)
           (invalid (field "bytebuf_params") "byte-buffer payloads are not supported"))
          ((payload-config-complex-params config)
           (invalid (field "complex_params") "complex payloads are not supported"))
          (t (values 0 0)))))

(defparameter +hint-channel-args+ '("grpc.optimization_target")
  "Channel arguments that only hint at gRPC C-core's tuning (gRPC's standard
scenarios set grpc.optimization_target); clgrpc has nothing to tune by them.")

(defun check-channel-args (prefix args)
  (dolist (arg args)
    (let ((name (channel-arg-name arg)))
      (if (member name +hint-channel-args+ :test #'string=)
          (note-inapplicable "channel argument" name)
          (invalid (format nil "~A.channel_args" prefix) "~S is not supported" name)))))

(defun check-common (prefix &key security-params channel-args other-api processes)
  (when security-params
    (invalid (format nil "~A.security_params" prefix) "TLS is not supported by clgrpc"))
  (check-channel-args prefix channel-args)
  (when (plusp (length other-api))
    (invalid (format nil "~A.other_~A_api" prefix (if (string= prefix "server_config") "server" "client"))
             "~S is not supported" other-api))
  (when (> processes 1)
    (invalid (format nil "~A.~A_processes" prefix (if (string= prefix "server_config") "server" "client"))
             "~D processes; this worker runs one" processes)))

(defun check-cores (prefix core-list core-limit usable)
  "The CPUs to run on for CORE-LIST and CORE-LIMIT, chosen from USABLE
(this worker's CPUs), or NIL to leave them all."
  (when (minusp core-limit)
    (invalid (format nil "~A.core_limit" prefix) "~D is negative" core-limit))
  (let ((cpus (if core-list
                  (let ((listed (sort (remove-duplicates core-list) #'<)))
                    (unless (subsetp listed usable)
                      (invalid (format nil "~A.core_list" prefix) "CPUs ~A are not among this worker's CPUs ~A"
                               (format-cpu-list (set-difference listed usable)) (format-cpu-list usable)))
                    listed)
                  usable)))
    (when (> core-limit (length cpus))
      (invalid (format nil "~A.core_limit" prefix) "~D cores, but this worker may use only ~A"
               core-limit (format-cpu-list cpus)))
    (cond ((plusp core-limit) (subseq cpus 0 core-limit))
          (core-list cpus)
          (t nil))))

(defun note-inapplicable (what value)
  (unless (member value '(0 nil))
    (format *error-output* "qps worker: ~A ~A has no meaning for clgrpc; ignored~%" what value)))

(defun check-server-config (config usable-cpus)
  "A plist of what the server is to be: :port, :cpus (NIL: all),
:each-message (the handlers of streamed requests run per message), or an
INVALID_ARGUMENT for what this worker does not support."
  (let ((type (server-config-server-type config)))
    (case type
      ((:sync-server :async-server :callback-server))
      (:async-generic-server
       (invalid "server_config.server_type" "ASYNC_GENERIC_SERVER needs byte-buffer payloads, which are not supported"))
      (t (invalid "server_config.server_type" "~A is not supported" (enum-name type)))))
  (check-common "server_config"
                :security-params (server-config-security-params config)
                :channel-args (server-config-channel-args config)
                :other-api (server-config-other-server-api config)
                :processes (server-config-server-processes config))
  (check-payload-config "server_config" (server-config-payload-config config))
  (unless (zerop (server-config-resource-quota-size config))
    (invalid "server_config.resource_quota_size" "resource quotas are not supported"))
  (let ((port (server-config-port config)))
    (unless (<= 0 port 65535)
      (invalid "server_config.port" "~D is not a port" port))
    (note-inapplicable "async_server_threads" (server-config-async-server-threads config))
    (note-inapplicable "threads_per_cq" (server-config-threads-per-cq config))
    (list :port port
          :each-message (member (server-config-server-type config) '(:async-server :callback-server))
          :cpus (check-cores "server_config" (server-config-core-list config)
                             (server-config-core-limit config) usable-cpus))))

(defun check-load-params (params)
  "(values :closed-loop nil) or (values :poisson offered-load)."
  (cond ((and params (load-params-closed-loop params)) (values :closed-loop nil))
        ((and params (load-params-poisson params))
         (let ((load (poisson-params-offered-load (load-params-poisson params))))
           (unless (and (realp load) (< 0 load 1d9))
             (invalid "client_config.load_params.poisson.offered_load" "~A; need more than 0 and less than 1e9" load))
           (values :poisson (float load 1d0))))
        (t (invalid "client_config.load_params" "neither closed_loop nor poisson"))))

(defun check-targets (targets)
  "The server targets as ((host . port) ...)."
  (unless targets
    (invalid "client_config.server_targets" "none; the driver fills them in from the server workers"))
  (loop for target in targets
        collect (multiple-value-bind (host port) (ignore-errors (split-host-port target))
                  (unless (and (stringp host) (plusp (length host)) (integerp port) (< 0 port 65536))
                    (invalid "client_config.server_targets" "~S is not HOST:PORT" target))
                  (cons host port))))

(defun check-client-config (config usable-cpus)
  "A plist of what the client is to do, or an INVALID_ARGUMENT for what this
worker does not support: :targets, :rpc-type, :channels, :outstanding,
:load, :offered-load, :request-size, :response-size, :messages-per-stream,
:resolution, :max-possible, :cpus."
  (let ((type (client-config-client-type config)))
    (if (member type '(:sync-client :async-client :callback-client))
        (note-inapplicable "client_type" (enum-name type))
        (invalid "client_config.client_type" "~A is not supported" (enum-name type))))
  (check-common "client_config"
                :security-params (client-config-security-params config)
                :channel-args (client-config-channel-args config)
                :other-api (client-config-other-client-api config)
                :processes (client-config-client-processes config))
  (when (client-config-use-coalesce-api config)
    (invalid "client_config.use_coalesce_api" "gRPC C++'s coalescing API has no clgrpc equivalent"))
  (unless (zerop (client-config-median-latency-collection-interval-millis config))
    (invalid "client_config.median_latency_collection_interval_millis" "periodic medians are not supported"))
  (let ((rpc-type (client-config-rpc-type config))
        (channels (client-config-client-channels config))
        (outstanding (client-config-outstanding-rpcs-per-channel config))
        (messages-per-stream (client-config-messages-per-stream config)))
    (case rpc-type
      ((:unary :streaming :streaming-from-client :streaming-from-server))
      (:streaming-both-ways
       (invalid "client_config.rpc_type" "STREAMING_BOTH_WAYS: gRPC's clients define no measurement for it"))
      (t (invalid "client_config.rpc_type" "~A is not an RPC type" (enum-name rpc-type))))
    (unless (plusp channels)
      (invalid "client_config.client_channels" "~D; need at least 1" channels))
    (unless (plusp outstanding)
      (invalid "client_config.outstanding_rpcs_per_channel" "~D; need at least 1" outstanding))
    (when (> (* channels outstanding) +max-client-calls+)
      (invalid "client_config.outstanding_rpcs_per_channel"
               "~D channels x ~D calls = ~D calls at once; this worker runs at most ~D (a thread each)"
               channels outstanding (* channels outstanding) +max-client-calls+))
    (when (minusp messages-per-stream)
      (invalid "client_config.messages_per_stream" "~D is negative" messages-per-stream))
    (note-inapplicable "async_client_threads" (client-config-async-client-threads config))
    (note-inapplicable "threads_per_cq" (client-config-threads-per-cq config))
    (multiple-value-bind (load offered-load) (check-load-params (client-config-load-params config))
      (when (and offered-load (> (/ (* channels outstanding) offered-load) 3600))
        (invalid "client_config.load_params.poisson.offered_load"
                 "~A calls a second over ~D calls in flight: each would start less than once an hour"
                 offered-load (* channels outstanding)))
      (multiple-value-bind (request-size response-size)
          (check-payload-config "client_config" (client-config-payload-config config))
        (multiple-value-bind (resolution max-possible)
            (check-histogram-params (client-config-histogram-params config))
          (list :targets (check-targets (client-config-server-targets config))
                :rpc-type rpc-type :channels channels :outstanding outstanding
                :load load :offered-load offered-load
                :request-size request-size :response-size response-size
                :messages-per-stream messages-per-stream
                :resolution resolution :max-possible max-possible
                :cpus (check-cores "client_config" (client-config-core-list config)
                                   (client-config-core-limit config) usable-cpus)))))))
