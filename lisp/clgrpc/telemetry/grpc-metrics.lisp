;;;; gRPC's metrics, with the names and labels of gRFC A66 (OpenTelemetry),
;;;; recorded by interceptors:
;;;;
;;;;   server: grpc.server.call.started {grpc.method}
;;;;           grpc.server.call.duration {grpc.method, grpc.status}
;;;;           grpc.server.call.sent_total_compressed_message_size
;;;;           grpc.server.call.rcvd_total_compressed_message_size
;;;;   client: grpc.client.attempt.started {grpc.method, grpc.target}
;;;;           grpc.client.attempt.duration {grpc.method, grpc.target, grpc.status}
;;;;           grpc.client.attempt.sent_total_compressed_message_size
;;;;           grpc.client.attempt.rcvd_total_compressed_message_size
;;;;           grpc.client.call.duration {grpc.method, grpc.target, grpc.status}
;;;;
;;;; grpc.method is "package.Service/Method" ("other" for a method the
;;;; server does not serve).  The server's are recorded by a call observer,
;;;; which sees every request from its HEADERS; the client's by an
;;;; interceptor, which sees each attempt (CALL-INFO-ON-ATTEMPT: retries,
;;;; transparent retries and hedges each count) and the call around them.

(in-package #:clgrpc.telemetry)

(defun %method-label (path)
  (if (and (plusp (length path)) (char= (char path 0) #\/)) (subseq path 1) path))

(defun %status-name (code)
  "CODE's name; a code past the known ones is UNKNOWN, so that a peer
sending codes of its own cannot make series without bound."
  (clgrpc.grpc:status-code-name (if (and code (<= 0 code 16)) code clgrpc.grpc:+unknown+)))

(defun %status-label (call)
  (%status-name (clgrpc.grpc:call-status-code call)))

(defun %elapsed-seconds (start-us)
  (/ (- (clgrpc.util:now-us) start-us) 1d6))

(defun server-metrics-observer (registry)
  "A server call observer (MAKE-SERVER :CALL-OBSERVERS) recording A66's
server metrics in REGISTRY: every gRPC request from its HEADERS, those
refused before a handler (UNIMPLEMENTED: grpc.method \"other\" when the
server does not serve it) too."
  (let ((started (ensure-instrument registry "grpc.server.call.started" :counter '("grpc.method")
                                    :help "Calls started on the server."))
        (duration (ensure-instrument registry "grpc.server.call.duration" :histogram
                                     '("grpc.method" "grpc.status") :unit "s" :buckets +latency-buckets+
                                     :help "Time from a call's start to its end on the server."))
        (sent (ensure-instrument registry "grpc.server.call.sent_total_compressed_message_size"
                                 :histogram '("grpc.method" "grpc.status") :unit "By"
                                 :buckets +size-buckets+ :help "Message octets a call sent."))
        (received (ensure-instrument registry "grpc.server.call.rcvd_total_compressed_message_size"
                                     :histogram '("grpc.method" "grpc.status") :unit "By"
                                     :buckets +size-buckets+ :help "Message octets a call received.")))
    (lambda (path registered)
      (let ((method (if registered (%method-label path) "other"))
            (start (clgrpc.util:now-us)))
        (counter-add registry started (list method))
        (lambda (code call)
          (let ((labels (list method (%status-name code))))
            (histogram-record registry duration labels (%elapsed-seconds start))
            (multiple-value-bind (out in) (if call (clgrpc.grpc:call-message-octets call) (values 0 0))
              (histogram-record registry sent labels out)
              (histogram-record registry received labels in))))))))

(defun client-metrics-interceptor (registry)
  "A channel interceptor (MAKE-CHANNEL :INTERCEPTORS) recording A66's
client metrics in REGISTRY."
  (let ((started (ensure-instrument registry "grpc.client.attempt.started" :counter
                                    '("grpc.method" "grpc.target") :help "Attempts started."))
        (attempt-duration (ensure-instrument registry "grpc.client.attempt.duration" :histogram
                                             '("grpc.method" "grpc.target" "grpc.status") :unit "s"
                                             :buckets +latency-buckets+
                                             :help "Time from an attempt's start to its end."))
        (sent (ensure-instrument registry "grpc.client.attempt.sent_total_compressed_message_size"
                                 :histogram '("grpc.method" "grpc.target" "grpc.status") :unit "By"
                                 :buckets +size-buckets+ :help "Message octets an attempt sent."))
        (received (ensure-instrument registry "grpc.client.attempt.rcvd_total_compressed_message_size"
                                     :histogram '("grpc.method" "grpc.target" "grpc.status") :unit "By"
                                     :buckets +size-buckets+
                                     :help "Message octets an attempt received."))
        (call-duration (ensure-instrument registry "grpc.client.call.duration" :histogram
                                          '("grpc.method" "grpc.target" "grpc.status") :unit "s"
                                          :buckets +latency-buckets+
                                          :help "Time from a call's start to its end, all attempts.")))
    (lambda (info next)
      (let* ((method (%method-label (clgrpc.grpc:call-info-method info)))
             (start (clgrpc.util:now-us))
             (recorded nil))
        (flet ((record-call (target status)
                 (setf recorded t)
                 (histogram-record registry call-duration (list method target status)
                                   (%elapsed-seconds start))))
          (clgrpc.grpc:call-info-on-attempt
           info (lambda (call)
                  (let ((target (or (clgrpc.grpc:call-channel-target call) ""))
                        (attempt-start (clgrpc.util:now-us)))
                    (counter-add registry started (list method target))
                    (lambda (call code)
                      (let ((labels (list method target (%status-name code))))
                        (histogram-record registry attempt-duration labels
                                          (%elapsed-seconds attempt-start))
                        (multiple-value-bind (out in) (clgrpc.grpc:call-attempt-message-octets call)
                          (histogram-record registry sent labels out)
                          (histogram-record registry received labels in)))))))
          (clgrpc.grpc:call-info-on-finish
           info (lambda (call)
                  (record-call (or (clgrpc.grpc:call-channel-target call) "") (%status-label call))))
          (handler-bind ((clgrpc.grpc:grpc-error
                           (lambda (e)
                             ;; A call that never started (no connection):
                             ;; its attempt was recorded, not the call.
                             (unless recorded
                               (record-call (clgrpc.grpc:call-info-target info)
                                            (clgrpc.grpc:status-code-name
                                             (clgrpc.grpc:grpc-error-code e)))))))
            (funcall next)))))))
