;;;; Interceptors on both sides (their order, metadata, ending a call,
;;;; seeing its status), call-on-finish, and the telemetry built on them:
;;;; gRPC's metrics and their Prometheus exposition, and trace context.
;;;; Against grpc-go: go/features.

(in-package #:clgrpc.tests)

(def-suite :clgrpc.interceptors :in :clgrpc)
(in-suite :clgrpc.interceptors)

(defun metadata-value (name metadata)
  (cdr (assoc name metadata :test #'string=)))

(defmacro with-intercepted ((channel &key server-interceptors server-observers channel-interceptors)
                            &body body)
  "BODY with CHANNEL to a server of the test service, each with the
interceptors (and call observers) given."
  (let ((server (gensym "SERVER")))
    `(let* ((,server (clgrpc.grpc:make-server :interceptors ,server-interceptors
                                              :call-observers ,server-observers))
            (,channel (progn (register-test-methods ,server)
                             (clgrpc.grpc:make-channel "127.0.0.1" (clgrpc.grpc:server-start ,server)
                                                       :interceptors ,channel-interceptors))))
       (setf *observed* nil)
       (unwind-protect (progn ,@body)
         (clgrpc.grpc:channel-close ,channel)
         (clgrpc.grpc:server-stop ,server :grace 1)))))

(test server-interceptors-run-in-order-and-may-end-a-call
  (let ((order '()) (lock (sb-thread:make-mutex)))
    (flet ((note (x) (sb-thread:with-mutex (lock) (push x order))))
      (with-intercepted (ch :server-interceptors
                            (list (lambda (call request next)
                                    (note :outer)
                                    (clgrpc.grpc:call-set-trailer-metadata call '(("x-seen-by" . "outer")))
                                    (handler-case (funcall next request)
                                      (clgrpc.grpc:grpc-error (e)
                                        (note (list :outer-saw (clgrpc.grpc:grpc-error-code e)))
                                        (error e))))
                                  (lambda (call request next)
                                    (note :inner)
                                    (when (metadata-value "x-deny" (clgrpc.grpc:call-metadata call))
                                      (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+permission-denied+ "denied"))
                                    (funcall next request))))
        (multiple-value-bind (response call) (unary ch "Echo" (bytes 1 2))
          (is (equalp (bytes 1 2) response))
          (is (equal "outer" (metadata-value "x-seen-by" (clgrpc.grpc:call-peer-trailers call)))))
        (is (equal '(:outer :inner) (reverse order)))
        (setf order '())
        (is (equal '("PERMISSION_DENIED" "denied")
                   (status-of (lambda () (unary ch "Echo" (bytes 1) :metadata '(("x-deny" . "1")))))))
        (is (equal `(:outer :inner (:outer-saw ,clgrpc.grpc:+permission-denied+)) (reverse order)))
        ;; Streaming methods pass through them too.
        (setf order '())
        (let ((call (clgrpc.grpc:client-streaming-call ch "/test.Svc/Sum" :timeout 5)))
          (clgrpc.grpc:call-send call (bytes 7))
          (is (equalp (bytes 7 0 0) (clgrpc.grpc:call-close-and-recv call))))
        (is (equal '(:outer :inner) (reverse order)))))))

(test channel-interceptors-change-the-call-and-see-how-it-ended
  (let ((ended '()) (lock (sb-thread:make-mutex)))
    (with-intercepted (ch :channel-interceptors
                          (list (lambda (info next)
                                  (push '("x-added" . "yes") (clgrpc.grpc:call-info-metadata info))
                                  (clgrpc.grpc:call-info-on-finish
                                   info (lambda (call)
                                          (sb-thread:with-mutex (lock)
                                            (push (list (clgrpc.grpc:call-info-method info)
                                                        (clgrpc.grpc:call-status-code call))
                                                  ended))))
                                  (funcall next))
                                (lambda (info next)
                                  (when (search "Fail" (clgrpc.grpc:call-info-method info))
                                    ;; Shortened: the Sleep method outlives it.
                                    (setf (clgrpc.grpc:call-info-timeout info) 0.2))
                                  (if (search "Refused" (clgrpc.grpc:call-info-method info))
                                      (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+unauthenticated+ "no token")
                                      (funcall next)))))
      (is (equalp (bytes 3) (unary ch "Echo" (bytes 3))))
      (is (equal "FAILED_PRECONDITION" (first (status-of (lambda () (unary ch "Fail" (bytes)))))))
      (is (equal '("UNAUTHENTICATED" "no token") (status-of (lambda () (unary ch "Refused" (bytes))))))
      (let ((call (clgrpc.grpc:server-streaming-call ch "/test.Svc/Count" (bytes 2) :timeout 5)))
        (is (equalp (list (bytes 0) (bytes 1)) (loop for m = (clgrpc.grpc:call-recv call) while m collect m))))
      (is (loop repeat 100 thereis (= 3 (length ended)) do (sleep 0.01)))
      (is (equal `(("/test.Svc/Echo" ,clgrpc.grpc:+ok+) ("/test.Svc/Fail" ,clgrpc.grpc:+failed-precondition+)
                   ("/test.Svc/Count" ,clgrpc.grpc:+ok+))
                 (reverse ended))))))

(defun append-octet (n)
  "A send wrapper appending N to each message."
  (lambda (call message next)
    (declare (ignore call))
    (funcall next (concatenate '(vector (unsigned-byte 8)) message (vector n)))))

(test message-wrappers-nest-as-grpc-gos-wrapped-streams
  ;; Two channel interceptors: the outer one's wrapper is nearest the
  ;; application, so it sees each message first; a client-streaming
  ;; response passes the receive wrappers too.
  (let ((seen (list nil)))
    (flet ((wrapping (n)
             (lambda (info next)
               (declare (ignore info))
               (clgrpc.grpc:call-wrap-messages
                (funcall next)
                :send (append-octet n)
                :recv (lambda (call next)
                        (declare (ignore call))
                        (let ((m (funcall next)))
                          (sb-ext:atomic-push (list n m) (car seen))
                          m))))))
      (with-intercepted (ch :channel-interceptors (list (wrapping 1) (wrapping 2)))
        (let ((call (clgrpc.grpc:bidi-streaming-call ch "/test.Svc/Chat" :timeout 5)))
          (clgrpc.grpc:call-send call (bytes 7))
          (is (equalp (bytes 7 1 2) (clgrpc.grpc:call-recv call)))
          (clgrpc.grpc:call-close-send call)
          (is (null (clgrpc.grpc:call-recv call))))
        ;; Received: the inner wrapper first, the outer one last.
        (is (equalp `((2 ,(bytes 7 1 2)) (1 ,(bytes 7 1 2))) (reverse (subseq (car seen) 2))))
        (setf (car seen) nil)
        (let ((call (clgrpc.grpc:client-streaming-call ch "/test.Svc/Sum" :timeout 5)))
          (clgrpc.grpc:call-send call (bytes 7))
          (is (equalp (bytes 10 0 0) (clgrpc.grpc:call-close-and-recv call))))
        (is (equal '(2 1) (reverse (mapcar #'first (car seen)))))))))

(defun add-to-each-octet (n)
  "A send wrapper adding N to each octet of a message."
  (lambda (call message next)
    (declare (ignore call))
    (funcall next (map '(vector (unsigned-byte 8)) (lambda (o) (mod (+ o n) 256)) message))))

(test message-wrappers-see-each-streamed-message-on-both-sides
  (let ((received (list nil)))
    (with-intercepted (ch :server-interceptors
                          (list (lambda (call request next)
                                  ;; Each message the handler sends gains 100, and
                                  ;; each it reads is noted.
                                  (clgrpc.grpc:call-wrap-messages
                                   call :send (add-to-each-octet 100)
                                        :recv (lambda (call next)
                                                (declare (ignore call))
                                                (let ((m (funcall next)))
                                                  (when m (sb-ext:atomic-push (aref m 0) (car received)))
                                                  m)))
                                  (funcall next request)))
                          :channel-interceptors
                          (list (lambda (info next)
                                  (let ((call (funcall next)))
                                    (if (member (clgrpc.grpc:call-info-kind info) '(:bidi :client-streaming))
                                        ;; The client's messages gain 1 and 2.
                                        (clgrpc.grpc:call-wrap-messages
                                         (clgrpc.grpc:call-wrap-messages call :send (add-to-each-octet 1))
                                         :send (add-to-each-octet 2)
                                         :recv (lambda (call next)
                                                 (declare (ignore call))
                                                 (let ((m (funcall next)))
                                                   ;; A message over 200 ends the call
                                                   ;; (98 goes out as 101, comes back as 201).
                                                   (when (and m (> (aref m 0) 200))
                                                     (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+out-of-range+ "too big"))
                                                   m)))
                                        call)))))
      (let ((call (clgrpc.grpc:bidi-streaming-call ch "/test.Svc/Chat" :timeout 5)))
        ;; 3 goes out as 6, is echoed, and comes back as 106.
        (clgrpc.grpc:call-send call (bytes 3))
        (is (equalp (bytes 106) (clgrpc.grpc:call-recv call)))
        (clgrpc.grpc:call-send call (bytes 98))
        (is (equal '("OUT_OF_RANGE" "too big")
                   (status-of (lambda () (clgrpc.grpc:call-recv call)))))
        (clgrpc.grpc:call-cancel call))
      ;; The server's handler read 6 and 101 (98 + 1 + 2).
      (is (equal '(101 6) (car received))))))

(test a-channel-interceptor-sees-and-may-replace-the-request
  (let ((seen '()))
    (with-intercepted (ch :channel-interceptors
                          (list (lambda (info next)
                                  (push (clgrpc.grpc:call-info-request info) seen)
                                  (when (eq (clgrpc.grpc:call-info-kind info) :unary)
                                    (setf (clgrpc.grpc:call-info-request info) (bytes 9 9)))
                                  (funcall next))))
      (is (equalp (bytes 9 9) (unary ch "Echo" (bytes 1 2))))
      (let ((call (clgrpc.grpc:server-streaming-call ch "/test.Svc/Count" (bytes 2) :timeout 5)))
        (is (equalp (list (bytes 0) (bytes 1)) (loop for m = (clgrpc.grpc:call-recv call) while m collect m))))
      (let ((call (clgrpc.grpc:client-streaming-call ch "/test.Svc/Sum" :timeout 5)))
        (clgrpc.grpc:call-send call (bytes 1))
        (clgrpc.grpc:call-close-and-recv call))
      (is (equalp (list (bytes 1 2) (bytes 2) nil) (reverse seen))))))

(defun http-get (port path)
  "The whole answer of an HTTP/1.1 GET of PATH on loopback PORT."
  (let ((socket (make-instance 'sb-bsd-sockets:inet-socket :type :stream :protocol :tcp)))
    (sb-bsd-sockets:socket-connect socket #(127 0 0 1) port)
    (let ((stream (sb-bsd-sockets:socket-make-stream socket :input t :output t :external-format :latin-1
                                                            :timeout 5)))
      (unwind-protect
           (progn (format stream "GET ~A HTTP/1.1~C~CHost: localhost~C~C~C~C" path
                          #\Return #\Newline #\Return #\Newline #\Return #\Newline)
                  (finish-output stream)
                  (with-output-to-string (out)
                    (loop for line = (read-line stream nil) while line do (write-line line out))))
        (close stream)))))

(test metrics-count-calls-by-method-and-status-and-a-scrape-reads-them
  (let ((registry (clgrpc.telemetry:make-registry)))
    (with-intercepted (ch :server-observers (list (clgrpc.telemetry:server-metrics-observer registry))
                          :channel-interceptors (list (clgrpc.telemetry:client-metrics-interceptor registry)))
      (dotimes (i 3) (unary ch "Echo" (filled 100 1)))
      (status-of (lambda () (unary ch "Fail" (bytes))))
      ;; Refused before any handler: counted, under "other".
      (status-of (lambda () (unary ch "NoSuchMethod" (bytes))))
      (flet ((value (name &rest labels) (clgrpc.telemetry:metric-value registry name labels)))
        (is (= 3 (value "grpc.server.call.started" "test.Svc/Echo")))
        (is (= 3 (value "grpc.server.call.duration" "test.Svc/Echo" "OK")))
        (is (= 1 (value "grpc.server.call.duration" "test.Svc/Fail" "FAILED_PRECONDITION")))
        (is (= 1 (value "grpc.server.call.started" "other")))
        (is (= 1 (value "grpc.server.call.duration" "other" "UNIMPLEMENTED")))
        (let ((target (clgrpc.grpc::channel-canonical-target ch)))
          ;; A66's grpc.target: the target as gRPC names it canonically.
          (is (equal (format nil "dns:///127.0.0.1:~D" (clgrpc.grpc::channel-port ch)) target))
          (is (= 3 (value "grpc.client.attempt.started" "test.Svc/Echo" target)))
          (is (= 3 (value "grpc.client.attempt.duration" "test.Svc/Echo" target "OK")))
          (is (= 3 (value "grpc.client.call.duration" "test.Svc/Echo" target "OK")))
          (is (= 1 (value "grpc.client.call.duration" "test.Svc/Fail" target "FAILED_PRECONDITION")))))
      (let* ((handle (clgrpc.telemetry:serve-metrics registry))
             (text (unwind-protect (http-get (clgrpc.telemetry:metrics-server-port handle) "/metrics")
                     (clgrpc.telemetry:stop-metrics handle))))
        (is (search "HTTP/1.1 200 OK" text))
        (is (search "grpc_server_call_started_total{grpc_method=\"test.Svc/Echo\"} 3" text))
        (is (search "# TYPE grpc_server_call_duration_seconds histogram" text))
        (is (search "grpc_server_call_duration_seconds_count{grpc_method=\"test.Svc/Echo\",grpc_status=\"OK\"} 3" text))
        ;; A66's bounds, printed exactly.
        (is (search "le=\"0.00001\"" text))
        (is (search "le=\"0.0003\"" text))
        ;; Each Echo sent and received 100 octets: all three in the 1024 bucket.
        (is (search "grpc_server_call_sent_total_compressed_message_size_bytes_bucket{grpc_method=\"test.Svc/Echo\",grpc_status=\"OK\",le=\"1024\"} 3" text))))))

(test trace-context-follows-a-call-into-its-handler
  (let ((seen nil))
    (let* ((server (clgrpc.grpc:make-server :interceptors (list (clgrpc.telemetry:server-tracing-interceptor))))
           (port (progn (clgrpc.grpc:register-method
                         server "/trace.Svc/Where"
                         (lambda (request call)
                           (declare (ignore call))
                           (setf seen clgrpc.telemetry:*trace-context*)
                           request))
                        (clgrpc.grpc:server-start server)))
           (channel (clgrpc.grpc:make-channel "127.0.0.1" port
                                              :interceptors (list (clgrpc.telemetry:client-tracing-interceptor)))))
      (unwind-protect
           (let ((parent (clgrpc.telemetry:new-trace-context)))
             (let ((clgrpc.telemetry:*trace-context* parent))
               (clgrpc.grpc:unary-call channel "/trace.Svc/Where" (bytes 1) :timeout 5))
             ;; The handler's span is in the caller's trace, a child of the
             ;; client's span, which is a child of PARENT.
             (is (equal (clgrpc.telemetry:trace-context-trace-id parent)
                        (clgrpc.telemetry:trace-context-trace-id seen)))
             (is (not (equal (clgrpc.telemetry:trace-context-span-id parent)
                             (clgrpc.telemetry:trace-context-span-id seen))))
             (is (clgrpc.telemetry:trace-context-sampled seen))
             ;; Without a context, each call starts a trace of its own.
             (clgrpc.grpc:unary-call channel "/trace.Svc/Where" (bytes 1) :timeout 5)
             (is (not (equal (clgrpc.telemetry:trace-context-trace-id parent)
                             (clgrpc.telemetry:trace-context-trace-id seen)))))
        (clgrpc.grpc:channel-close channel)
        (clgrpc.grpc:server-stop server :grace 1)))))

(test traceparent-values-are-checked-as-w3c-says
  (let ((good "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
    (is (equal "4bf92f3577b34da6a3ce929d0e0e4736"
               (clgrpc.telemetry:trace-context-trace-id (clgrpc.telemetry:parse-traceparent good))))
    (is (equal good (clgrpc.telemetry:format-traceparent (clgrpc.telemetry:parse-traceparent good))))
    ;; A later version is read as 00, what follows its fields behind a dash.
    (dolist (later '("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
                     "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-holds"))
      (is (equal "00f067aa0ba902b7"
                 (clgrpc.telemetry:trace-context-span-id (clgrpc.telemetry:parse-traceparent later)))
          "~S" later))
    (dolist (bad '("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
                   "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01.what"
                   "00-00000000000000000000000000000000-00f067aa0ba902b7-01"
                   "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"
                   "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"
                   "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-"
                   "" nil))
      (is (null (clgrpc.telemetry:parse-traceparent bad)) "~S" bad))))

(test the-scrape-endpoint-outlasts-a-slow-client-and-stops
  ;; A client that sends a byte now and then holds one of four slots for
  ;; 5 s at most; a scrape beside it is answered at once; stopping ends both.
  (let* ((registry (clgrpc.telemetry:make-registry))
         (handle (clgrpc.telemetry:serve-metrics registry :host "localhost"))
         (port (clgrpc.telemetry:metrics-server-port handle))
         (slow (make-instance 'sb-bsd-sockets:inet-socket :type :stream :protocol :tcp)))
    (unwind-protect
         (progn
           (sb-bsd-sockets:socket-connect slow #(127 0 0 1) port)
           (sb-bsd-sockets:socket-send slow "GET" nil)
           (let ((start (get-internal-real-time)))
             (is (search "HTTP/1.1 200 OK" (http-get port "/metrics?x=1")))
             (is (< (- (get-internal-real-time) start) internal-time-units-per-second)))
           (is (search "404" (http-get port "/other"))))
      (let ((start (get-internal-real-time)))
        (clgrpc.telemetry:stop-metrics handle)
        (is (< (- (get-internal-real-time) start) (* 2 internal-time-units-per-second))))
      (sb-bsd-sockets:socket-close slow))))
