;;;; The Lisp peer of go/features (peer_test.go has its grpc-go twin): one
;;;; raw method, /features.Peer/Flaky, which echoes its request unless the
;;;; call's metadata says otherwise:
;;;;   - fail-code: N, the status it fails with;
;;;;   - fail-detail-type and fail-detail-bin: a rich error's detail (a
;;;;     google.protobuf.Any's type URL and value) sent with that status;
;;;;   - sleep-ms: how long it waits first.
;;;; Its server traces (W3C traceparent) and counts (gRPC's metrics) its
;;;; calls; -metrics_addr serves the counts to Prometheus.
;;;;
;;;;   peer [-addr HOST:PORT] [-metrics_addr HOST:PORT]
;;;;
;;;; It prints "listening on HOST:PORT" once bound and stops on SIGINT or
;;;; SIGTERM.

(defpackage #:featurepeer
  (:use #:cl #:cmdline)
  (:documentation "A clgrpc server that fails, waits and sends rich errors as each call's metadata asks.")
  (:export #:main #:flaky))

(in-package #:featurepeer)

(defun metadata-value (call name)
  (cdr (assoc name (clgrpc.grpc:call-metadata call) :test #'string=)))

(defun flaky (request call)
  "/features.Peer/Flaky, as the call's metadata asks."
  (let ((sleep-ms (metadata-value call "sleep-ms"))
        (code (metadata-value call "fail-code")))
    (when sleep-ms
      (sleep (/ (or (parse-integer sleep-ms :junk-allowed t) 0) 1000)))
    (when code
      (let ((type (metadata-value call "fail-detail-type"))
            (value (metadata-value call "fail-detail-bin")))
        (error 'clgrpc.grpc:grpc-error
               :code (or (parse-integer code :junk-allowed t) clgrpc.grpc:+unknown+)
               :message "failed as asked"
               :details (and type (list (clgrpc.grpc:make-status-detail
                                         type (coerce (or value #()) '(simple-array (unsigned-byte 8) (*)))))))))
    request))

(defparameter *flags*
  (list (flag-spec "addr" :string "127.0.0.1:0" "`host:port` to listen on; port 0 picks a free port")
        (flag-spec "metrics_addr" :string "" "serve gRPC's metrics to Prometheus at GET /metrics on this `host:port`")))

(defvar *stop-requested* nil)

(defun main ()
  "Entry point of the peer executable; returns the exit code."
  (call-with-command-line
   *flags* (rest sb-ext:*posix-argv*)
   (lambda (options rest given)
     (declare (ignore given))
     (when rest
       (flag-fail "unexpected arguments: [~{~S~^ ~}]" rest))
     (multiple-value-bind (host port) (split-host-port (getf options :addr))
       (let* ((registry (clgrpc.telemetry:make-registry))
              (server (clgrpc.grpc:make-server
                       :call-observers (list (clgrpc.telemetry:server-metrics-observer registry))
                       :interceptors (list (clgrpc.telemetry:server-tracing-interceptor)))))
         (clgrpc.grpc:register-method server "/features.Peer/Flaky" #'flaky)
         (let ((metrics (getf options :metrics-addr)))
           (when (plusp (length metrics))
             (multiple-value-bind (metrics-host metrics-port) (split-host-port metrics)
               (clgrpc.telemetry:serve-metrics registry :host metrics-host :port metrics-port))))
         (format t "listening on ~A:~D~%" host (clgrpc.grpc:server-start server :host host :port port))
         (finish-output)
         (flet ((request-stop (signal info context)
                  (declare (ignore signal info context))
                  (setf *stop-requested* t)))
           (sb-sys:enable-interrupt sb-unix:sigint #'request-stop)
           (sb-sys:enable-interrupt sb-unix:sigterm #'request-stop))
         (loop until *stop-requested* do (sleep 0.1))
         (clgrpc.grpc:server-stop server :grace 1)
         0)))
   :description "Serves /features.Peer/Flaky (raw octets), failing, waiting and sending rich errors
as each call's metadata asks."))
