;;;; The RouteGuide client program, with the command line, output and exit
;;;; codes of go/routeguide/client:
;;;;
;;;;   client [-addr HOST:PORT | -serve] [-rpc all|get|list|record|chat]
;;;;          [-points N] [-timeout DURATION]
;;;;          [-tls [-ca_file FILE] [-cert_file FILE -key_file FILE]
;;;;           [-server_host_override NAME]]
;;;;
;;;; Exit 0 on success, 1 when a call fails (the error on stderr), 2 on a
;;;; bad command line (the problem and the usage on stderr).

(defpackage #:routeguide.client-main
  (:use #:cl #:cmdline #:routeguide.client)
  (:documentation "The RouteGuide client program, with go/routeguide/client's command line.")
  (:export #:client-main))

(in-package #:routeguide.client-main)

(defparameter *client-flags*
  (list* (flag-spec "addr" :string "127.0.0.1:10000" "`host:port` of the server")
         (flag-spec "serve" :bool nil
                    "start the server in-process on 127.0.0.1:0 and call it over loopback TCP (excludes -addr)")
         (flag-spec "rpc" :string "all" (format nil "which RPC to call: ~{~A~^|~}" *rpc-names*))
         (flag-spec "points" :int 10
                    "number of points RecordRoute sends (a fixed-seed route over database features)")
         (flag-spec "timeout" :duration 10 "deadline for each RPC")
         (tls-flags:client-flags)))

(defun check-client-options (options rest given)
  (cond (rest (flag-fail "unexpected arguments: [~{~S~^ ~}]" rest))
        ((and (getf options :serve) (member "addr" given :test #'string=))
         (flag-fail "-serve and -addr are mutually exclusive"))
        ((not (member (getf options :rpc) *rpc-names* :test #'string=))
         (flag-fail "-rpc ~S is not one of ~{~A~^|~}" (getf options :rpc) *rpc-names*))
        ((minusp (getf options :points)) (flag-fail "-points must not be negative"))
        ((not (plusp (getf options :timeout))) (flag-fail "-timeout must be positive"))
        ((and (getf options :serve) (getf options :tls))
         (flag-fail "-serve and -tls are mutually exclusive: the in-process server is plaintext")))
  (multiple-value-bind (host port) (split-host-port (getf options :addr))
    (multiple-value-bind (tls server-name) (tls-flags:client-context options)
      (list* :host host :port port :tls-context tls :server-name server-name options))))

(defun call-server (options)
  "Connect (after starting the in-process server with -serve) and run the
calls; a CLIENT-ERROR names the server."
  (let ((server nil)
        (host (getf options :host))
        (port (getf options :port)))
    (unwind-protect
         (progn
           (when (getf options :serve)
             (multiple-value-setq (server port) (routeguide.server:start-server :host "127.0.0.1" :port 0))
             (setf host "127.0.0.1")
             (format t "in-process server listening on 127.0.0.1:~D~%" port))
           (let ((channel (clgrpc.grpc:make-channel host port :tls (getf options :tls-context)
                                                              :server-name (getf options :server-name))))
             (unwind-protect
                  (handler-case (run-client channel *standard-output*
                                            :rpc (getf options :rpc) :points (getf options :points)
                                            :timeout (getf options :timeout))
                    (client-error (e)
                      (error 'client-error :message (format nil "server ~A:~D: ~A" host port e))))
               (clgrpc.grpc:channel-close channel))))
      (when server
        (clgrpc.grpc:server-stop server :grace 0)))))

(defun client-main ()
  "Entry point of the client executable; returns the exit code."
  (call-with-command-line
   *client-flags* (rest sb-ext:*posix-argv*)
   (lambda (options rest given)
     (let ((options (check-client-options options rest given)))
       (handler-case (progn (call-server options)
                            (finish-output)
                            0)
         (error (e)
           (finish-output)
           (format *error-output* "routeguide client: ~A~%" e)
           1))))
   :description "Calls the RouteGuide RPCs and prints a short report of each, over plaintext
HTTP/2 or, with -tls, over TLS (OpenSSL 3, loaded from the system's library path or
LD_LIBRARY_PATH)."))
