;;;; The RouteGuide server program, with the command line of
;;;; go/routeguide/server:
;;;;
;;;;   server [-addr HOST:PORT] [-db PATH] [-max_concurrent_streams N]
;;;;          [-shutdown_timeout DURATION] [-unary_inline] [-heap_report]
;;;;          [-metrics_addr HOST:PORT]
;;;;          [limit flags, as the Go server's]
;;;;          [-tls -cert_file FILE -key_file FILE [-ca_file FILE [-require_client_cert]]]
;;;;
;;;; It prints "listening on HOST:PORT" to stdout once the port is bound,
;;;; then one "runtime ..." line, answers SIGWINCH with a "heap ..." line,
;;;; and stops gracefully on SIGINT or SIGTERM (clgrpc.grpc:serve-until-stopped).

(defpackage #:routeguide.server
  (:use #:cl #:cmdline #:routeguide)
  (:documentation "The RouteGuide server program on clgrpc, with go/routeguide/server's command line.")
  (:export #:start-server #:server-main))

(in-package #:routeguide.server)

(defun start-server (&key (host "127.0.0.1") (port 0) (db (default-features))
                          (max-concurrent-streams 1000) unary-inline limits tls heap-report
                          metrics-addr)
  "A running clgrpc server with the RouteGuide service, the standard health
service (SERVING, for the server and for RouteGuide, once bound) and server
reflection.
UNARY-INLINE declares GetFeature inline (clgrpc's REGISTER-METHOD :INLINE):
it runs on its connection's reactor instead of the handler executor.  It is
tuning the Go server has no counterpart of, so it is off unless asked for.
LIMITS is a plist of MAKE-SERVER's limit arguments; TLS a clgrpc server TLS
context, or NIL for plaintext.  HEAP-REPORT serves the heap in use too
(CLGRPC.GRPC:REGISTER-HEAP-REPORT), for hostile-peer tests.  METRICS-ADDR,
(host . port), records gRPC's metrics (a call observer) and W3C trace
context (an interceptor) with clgrpc/telemetry and serves the metrics to Prometheus
scrapes there.  Returns (values server port health)."
  (let* ((registry (and metrics-addr (clgrpc.telemetry:make-registry)))
         (server (apply #'clgrpc.grpc:make-server
                        :max-concurrent-streams max-concurrent-streams :tls tls
                        :call-observers (and registry (list (clgrpc.telemetry:server-metrics-observer registry)))
                        :interceptors (and registry (list (clgrpc.telemetry:server-tracing-interceptor)))
                        limits)))
    (when registry
      (clgrpc.telemetry:serve-metrics registry :host (car metrics-addr) :port (cdr metrics-addr)))
    (register-service server :service (make-service db) :inline unary-inline)
    (let ((health (clgrpc.health:make-health)))
      (clgrpc.health:register-health server health)
      (clgrpc.reflection:register-reflection server)
      (when heap-report
        (clgrpc.grpc:register-heap-report server))
      (let ((port (clgrpc.grpc:server-start server :host host :port port)))
        (clgrpc.health:set-serving-status health "" :serving)
        (clgrpc.health:set-serving-status health "routeguide.RouteGuide" :serving)
        (values server port health)))))

;;; The flags of go/routeguide/server, with its defaults; a
;;; -max_concurrent_streams of 0 keeps clgrpc's default, as 0 keeps
;;; grpc-go's.
(defparameter *server-flags*
  (list* (flag-spec "addr" :string "127.0.0.1:10000" "`host:port` to listen on; port 0 picks a free port")
         (flag-spec "db" :string ""
                    "`path` to a JSON feature database (default: the embedded standard database)")
         (flag-spec "max_concurrent_streams" :int 0
                    "limit on concurrent streams per HTTP/2 connection (0: the default, 1000)")
         (flag-spec "shutdown_timeout" :duration 5
                    "how long a graceful stop may wait for RPCs in flight before connections are closed")
         (flag-spec "unary_inline" :bool nil
                    "run GetFeature on the connection's reactor thread, not on the handler executor (tuning)")
         ;; The limits, with the Go server's flags and grpc-go's defaults.
         (flag-spec "max_connections" :int 0
                    "connections beyond this `count` are closed at once (0: no limit)")
         (flag-spec "connection_timeout" :duration 120
                    "how long a new connection may take to send the HTTP/2 preface and SETTINGS")
         (flag-spec "keepalive_time" :duration 7200 "ping a client silent for this long")
         (flag-spec "keepalive_timeout" :duration 20
                    "close the connection if a keepalive ping is not answered within this")
         (flag-spec "max_connection_idle" :duration 0
                    "send GOAWAY to a connection without RPCs for this long (0: never)")
         (flag-spec "max_connection_age" :duration 0
                    "send GOAWAY to a connection this old (0: never)")
         (flag-spec "max_connection_age_grace" :duration 0
                    "close a connection this long after its age GOAWAY (0: never)")
         (flag-spec "keepalive_min_time" :duration 300
                    "pings from a client closer than this are strikes; three get GOAWAY ENHANCE_YOUR_CALM")
         (flag-spec "keepalive_permit_without_stream" :bool nil
                    "allow client pings when there are no RPCs")
         (flag-spec "max_header_list_size" :int 16777216
                    "SETTINGS_MAX_HEADER_LIST_SIZE advertised and enforced, in `bytes`")
         (flag-spec "heap_report" :bool nil
                    "also serve /clgrpc.Diagnostics/HeapInUse, the heap in use (for tests)")
         (flag-spec "metrics_addr" :string ""
                    "record gRPC's metrics and serve them to Prometheus at GET /metrics on this `host:port` (default: none)")
         (tls-flags:server-flags)))

(defun limit-options (options)
  "MAKE-SERVER's limit arguments from the parsed flags (0 durations: none)."
  (flet ((seconds (key) (let ((v (getf options key))) (and (plusp v) v))))
    (list :max-connections (let ((n (getf options :max-connections))) (and (plusp n) n))
          :handshake-timeout (seconds :connection-timeout)
          :keepalive-time (seconds :keepalive-time)
          :keepalive-timeout (getf options :keepalive-timeout)
          :max-connection-idle (seconds :max-connection-idle)
          :max-connection-age (seconds :max-connection-age)
          :max-connection-age-grace (seconds :max-connection-age-grace)
          :keepalive-min-time (getf options :keepalive-min-time)
          :keepalive-permit-without-stream (getf options :keepalive-permit-without-stream)
          :max-header-list-size (getf options :max-header-list-size))))

(defun check-server-options (options rest)
  (cond (rest (flag-fail "unexpected arguments: [~{~S~^ ~}]" rest))
        ((not (<= 0 (getf options :max-concurrent-streams) 4294967295))
         (flag-fail "-max_concurrent_streams ~D is not from 0 to 4294967295"
                    (getf options :max-concurrent-streams)))
        ((minusp (getf options :shutdown-timeout))
         (flag-fail "-shutdown_timeout must not be negative"))
        ((minusp (getf options :max-connections))
         (flag-fail "-max_connections must not be negative"))
        ((not (<= 0 (getf options :max-header-list-size) 4294967295))
         (flag-fail "-max_header_list_size ~D is not from 0 to 4294967295"
                    (getf options :max-header-list-size)))
        ((find-if #'minusp (list (getf options :connection-timeout) (getf options :keepalive-time)
                                 (getf options :keepalive-timeout)
                                 (getf options :max-connection-idle)
                                 (getf options :max-connection-age)
                                 (getf options :max-connection-age-grace)
                                 (getf options :keepalive-min-time)))
         (flag-fail "durations must not be negative")))
  (multiple-value-bind (host port) (split-host-port (getf options :addr))
    (list :host host :port port
          :db (let ((db (getf options :db))) (and (plusp (length db)) db))
          :max-concurrent-streams (let ((n (getf options :max-concurrent-streams)))
                                    (if (zerop n) 1000 (min n most-positive-fixnum)))
          :shutdown-timeout (getf options :shutdown-timeout)
          :unary-inline (getf options :unary-inline)
          :heap-report (getf options :heap-report)
          :metrics-addr (let ((addr (getf options :metrics-addr)))
                          (and (plusp (length addr))
                               (multiple-value-bind (host port) (split-host-port addr)
                                 (cons host port))))
          :limits (limit-options options)
          :tls (tls-flags:server-context options))))

(defun server-main ()
  "Entry point of the server executable; returns the exit code."
  (call-with-command-line
   *server-flags* (rest sb-ext:*posix-argv*)
   (lambda (options rest given)
     (declare (ignore given))
     (serve (check-server-options options rest)))
   :description "Serves the RouteGuide gRPC service, over plaintext HTTP/2 or, with -tls, over
TLS (OpenSSL 3, loaded from the system's library path or LD_LIBRARY_PATH). Prints
\"listening on HOST:PORT\" to stdout once bound, then a \"runtime ...\" line, answers
SIGWINCH with a \"heap live=N\" line, and stops gracefully on SIGINT or SIGTERM."))

(defun serve (options)
  "Run the server OPTIONS describe until SIGINT or SIGTERM; returns the exit code."
  ;; SBCL's own GC settings, as the Go server runs with Go's: benchmarks
  ;; compare both at their runtime defaults.
  (handler-case
      (multiple-value-bind (server port health)
          (start-server :host (getf options :host) :port (getf options :port)
                        :db (if (getf options :db)
                                (load-features (getf options :db))
                                (default-features))
                        :max-concurrent-streams (getf options :max-concurrent-streams)
                        :unary-inline (getf options :unary-inline)
                        :heap-report (getf options :heap-report)
                        :metrics-addr (getf options :metrics-addr)
                        :limits (getf options :limits)
                        :tls (getf options :tls))
        (clgrpc.grpc:serve-until-stopped server (format nil "listening on ~A:~D" (getf options :host) port))
        (format *error-output* "routeguide server: shutting down~%")
        ;; NOT_SERVING for the grace period, so that a load balancer stops
        ;; sending new calls while those in flight finish.
        (clgrpc.health:shutdown-health health)
        (clgrpc.grpc:server-stop server :grace (getf options :shutdown-timeout))
        ;; Every call has finished and every connection is closed: exit
        ;; now rather than have SBCL unwind the idle pool threads one by one.
        (finish-output)
        (finish-output *error-output*)
        (sb-ext:exit :code 0 :abort t))
    (error (e)
      (format *error-output* "routeguide server: ~A~%" e)
      1)))
