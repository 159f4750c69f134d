;;;; The interop server program, with the command line of gRPC's interop
;;;; servers (grpc-go's interop/server):
;;;;
;;;;   interop_server [-port N] [-host HOST] [-heap_report]
;;;;                  [-use_tls -tls_cert_file FILE -tls_key_file FILE
;;;;                   [-ca_file FILE [-require_client_cert]]]
;;;;
;;;; It prints "listening on HOST:PORT" to stdout once bound (-port 0 picks
;;;; a free port) and stops on SIGINT or SIGTERM.  Unlike grpc-go's, it binds
;;;; loopback unless -host says otherwise, and -use_tls needs the certificate
;;;; and key (grpc-go's falls back to test credentials it carries).
;;;; -ca_file and -require_client_cert, for mutual TLS, are ours, and so
;;;; is -heap_report, which serves the heap in use for hostile-peer tests.

(in-package #:interop)

(defun start-server (&key (host "127.0.0.1") (port 0) tls heap-report)
  "A running clgrpc server with TestService, and server reflection, over
TLS with the server context TLS; with HEAP-REPORT, the heap in use too
(CLGRPC.GRPC:REGISTER-HEAP-REPORT).  Returns (values server port)."
  (let ((server (clgrpc.grpc:make-server :tls tls)))
    (register-interop-service server)
    (clgrpc.reflection:register-reflection server)
    (when heap-report
      (clgrpc.grpc:register-heap-report server))
    (values server (clgrpc.grpc:server-start server :host host :port port))))

(defparameter *server-flags*
  (list* (flag-spec "port" :int 10000 "the `port` to listen on; 0 picks a free port")
         (flag-spec "host" :string "127.0.0.1" "the `address` to listen on")
         (flag-spec "heap_report" :bool nil
                    "also serve /clgrpc.Diagnostics/HeapInUse, the heap in use (for tests)")
         (tls-flags:server-flags :tls "use_tls" :cert "tls_cert_file" :key "tls_key_file")))

(defun server-tls-context (options)
  "The TLS context the options ask for, or NIL for plaintext."
  (tls-flags:server-context options :tls "use_tls" :cert "tls_cert_file" :key "tls_key_file"))

(defvar *stop-requested* nil)

(defun serve (host port tls heap-report)
  (multiple-value-bind (server port)
      (start-server :host host :port port :tls tls :heap-report heap-report)
    ;; A signal handler only sets a flag: it may interrupt any thread, even
    ;; one holding a lock the shutdown needs.
    (flet ((request-stop (signal info context)
             (declare (ignore signal info context))
             (setf *stop-requested* t)))
      (sb-sys:enable-interrupt sb-unix:sigint #'request-stop)
      (sb-sys:enable-interrupt sb-unix:sigterm #'request-stop))
    (format t "listening on ~A:~D~%" host port)
    (finish-output)
    (loop until *stop-requested* do (sleep 0.1))
    (clgrpc.grpc:server-stop server :grace 1)
    (finish-output *error-output*)
    (sb-ext:exit :code 0 :abort t)))

(defun server-main ()
  "Entry point of the interop server executable; returns the exit code."
  (call-with-command-line
   *server-flags* (rest sb-ext:*posix-argv*)
   (lambda (options rest given)
     (declare (ignore given))
     (cond (rest (flag-fail "unexpected arguments: [~{~S~^ ~}]" rest))
           ((not (<= 0 (getf options :port) 65535))
            (flag-fail "-port ~D is not from 0 to 65535" (getf options :port))))
     (handler-case (serve (getf options :host) (getf options :port) (server-tls-context options)
                           (getf options :heap-report))
       (error (e)
         (format *error-output* "interop server: ~A~%" e)
         1)))
   :description "Serves grpc.testing.TestService, gRPC's interop test service, over plaintext
HTTP/2 or, with -use_tls, over TLS (OpenSSL 3, loaded from the system's library path or
LD_LIBRARY_PATH). Prints \"listening on HOST:PORT\" to stdout once bound."))
