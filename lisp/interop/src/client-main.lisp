;;;; The interop client program, with the command line of gRPC's interop
;;;; clients (grpc-go's interop/client):
;;;;
;;;;   interop_client [-server_host HOST] [-server_port N] [-test_case NAMES]
;;;;                  [-soak_iterations N] [-soak_max_failures N]
;;;;                  [-soak_per_iteration_max_acceptable_latency_ms MS]
;;;;                  [-soak_overall_timeout_seconds S]
;;;;                  [-use_tls [-use_test_ca -ca_file FILE]
;;;;                   [-server_host_override NAME]]
;;;;
;;;; NAMES is one case, a comma-separated list, or "all".  Each case prints
;;;; "PASS name" or "FAIL name: reason"; the exit code is 0 when all pass, 1
;;;; otherwise, 2 on a bad command line.

(in-package #:interop)

(defparameter *test-cases*
  '(("empty_unary" . empty-unary)
    ("large_unary" . large-unary)
    ("client_compressed_unary" . client-compressed-unary)
    ("server_compressed_unary" . server-compressed-unary)
    ("client_streaming" . client-streaming)
    ("client_compressed_streaming" . client-compressed-streaming)
    ("server_streaming" . server-streaming)
    ("server_compressed_streaming" . server-compressed-streaming)
    ("ping_pong" . ping-pong)
    ("messages_beyond_the_window" . messages-beyond-the-window)
    ("empty_stream" . empty-stream)
    ("cancel_after_begin" . cancel-after-begin)
    ("cancel_after_first_response" . cancel-after-first-response)
    ("timeout_on_sleeping_server" . timeout-on-sleeping-server)
    ("custom_metadata" . custom-metadata)
    ("status_code_and_message" . status-code-and-message)
    ("special_status_message" . special-status-message)
    ("unimplemented_method" . unimplemented-method)
    ("unimplemented_service" . unimplemented-service)
    ("rpc_soak" . :rpc-soak)
    ("channel_soak" . :channel-soak))
  "Every case the client runs, by its name in the interop test descriptions.")

(defun run-test-case (name host port &optional (soak (make-soak)) tls server-name)
  "Run the case NAME against HOST:PORT on a channel of its own, over TLS
with the client context TLS if given.  Returns NIL when it passes, or the
reason it failed."
  (flet ((channel () (clgrpc.grpc:make-channel host port :tls tls :server-name server-name)))
    (let ((test (cdr (assoc name *test-cases* :test #'string=)))
          (channel (channel)))
      (unwind-protect
           (handler-case
               (progn
                 (case test
                   (:rpc-soak (rpc-soak channel soak))
                   (:channel-soak (channel-soak #'channel soak))
                   (t (funcall test channel)))
                 nil)
             (case-failure (e) (princ-to-string e))
             (clgrpc.grpc:grpc-error (e)
               (format nil "unexpected status ~A: ~A" (code-name (clgrpc.grpc:grpc-error-code e))
                       (clgrpc.grpc:grpc-error-message e)))
             (error (e) (format nil "~A" e)))
        (clgrpc.grpc:channel-close channel)))))

(defparameter *client-flags*
  (list* (flag-spec "server_host" :string "127.0.0.1" "the server's `host`")
         (flag-spec "server_port" :int 10000 "the server's `port`")
         (flag-spec "test_case" :string "large_unary"
                    "the case to run: a name, a comma-separated list of names, or all")
         (flag-spec "soak_iterations" :int 10 "calls in rpc_soak and channel_soak")
         (flag-spec "soak_max_failures" :int 0 "soak calls that may fail or be too slow")
         (flag-spec "soak_per_iteration_max_acceptable_latency_ms" :int 1000
                    "the longest a soak call may take, in `ms`")
         (flag-spec "soak_overall_timeout_seconds" :int 10
                    "the time all soak calls together may take, in `seconds`")
         (tls-flags:client-flags :tls "use_tls" :trust-switch "use_test_ca")))

(defun parse-test-cases (text)
  "The case names of -test_case TEXT, or a FLAG-ERROR."
  (if (string= text "all")
      (mapcar #'car *test-cases*)
      (loop for start = 0 then (1+ comma)
            for comma = (position #\, text :start start)
            for name = (subseq text start comma)
            do (unless (assoc name *test-cases* :test #'string=)
                 (flag-fail "-test_case ~S is not one of all, ~{~A~^, ~}" name
                            (mapcar #'car *test-cases*)))
            collect name
            while comma)))

(defun check-client-options (options rest)
  (cond (rest (flag-fail "unexpected arguments: [~{~S~^ ~}]" rest))
        ((not (<= 1 (getf options :server-port) 65535))
         (flag-fail "-server_port ~D is not from 1 to 65535" (getf options :server-port)))
        ((some #'minusp (list (getf options :soak-iterations) (getf options :soak-max-failures)))
         (flag-fail "soak counts must not be negative"))
        ((some (lambda (v) (not (plusp v)))
               (list (getf options :soak-per-iteration-max-acceptable-latency-ms)
                     (getf options :soak-overall-timeout-seconds)))
         (flag-fail "soak limits must be positive")))
  (multiple-value-bind (tls server-name)
      (tls-flags:client-context options :tls "use_tls" :trust-switch "use_test_ca")
    (values (parse-test-cases (getf options :test-case))
            tls server-name
            (make-soak :iterations (getf options :soak-iterations)
                       :max-failures (getf options :soak-max-failures)
                       :max-latency (/ (getf options :soak-per-iteration-max-acceptable-latency-ms) 1000)
                       :overall-timeout (getf options :soak-overall-timeout-seconds)))))

(defun client-main ()
  "Entry point of the interop client executable; returns the exit code."
  (call-with-command-line
   *client-flags* (rest sb-ext:*posix-argv*)
   (lambda (options rest given)
     (declare (ignore given))
     (multiple-value-bind (names tls server-name soak) (check-client-options options rest)
       (let ((failed 0))
         (dolist (name names)
           (let ((reason (run-test-case name (getf options :server-host)
                                        (getf options :server-port) soak tls server-name)))
             (if reason
                 (progn (incf failed)
                        (format t "FAIL ~A: ~A~%" name reason))
                 (format t "PASS ~A~%" name))
             (finish-output)))
         (if (zerop failed) 0 1))))
   :description "Runs gRPC interop test cases against a grpc.testing.TestService server over
plaintext HTTP/2 or, with -use_tls, over TLS (OpenSSL 3, loaded from the system's library path
or LD_LIBRARY_PATH)."))
