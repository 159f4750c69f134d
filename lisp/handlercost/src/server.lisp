;;;; The handler-cost server program, with the command line of
;;;; go/handlercost/server (but for the tuning flags, each runtime's own):
;;;;
;;;;   server [-addr HOST:PORT] [-shutdown_timeout DURATION] [-fast_inline]
;;;;
;;;; clgrpc's server at its defaults.  It prints "listening on HOST:PORT" to
;;;; stdout once the port is bound, then one "runtime ..." line, answers
;;;; SIGWINCH with a "heap ..." line, and stops gracefully on SIGINT or SIGTERM
;;;; (clgrpc.grpc:serve-until-stopped).

(defpackage #:handlercost.server
  (:use #:cl #:cmdline)
  (:documentation "The handler-cost server program on clgrpc, with go/handlercost/server's command line.")
  (:export #:server-main))

(in-package #:handlercost.server)

(defparameter *server-flags*
  (list (flag-spec "addr" :string "127.0.0.1:10000" "`host:port` to listen on; port 0 picks a free port")
        (flag-spec "shutdown_timeout" :duration 5
                   "how long a graceful stop may wait for calls in flight before connections are closed")
        (flag-spec "fast_inline" :bool nil
                   "declare Fast :inline, run on the reactor that read it, as a tuned server would (Sleep and Spin never are)")))

(defun server-main ()
  "Entry point of the server executable; returns the exit code."
  (call-with-command-line
   *server-flags* (rest sb-ext:*posix-argv*)
   (lambda (options rest given)
     (declare (ignore given))
     (when rest
       (flag-fail "unexpected arguments: [~{~S~^ ~}]" rest))
     (when (minusp (getf options :shutdown-timeout))
       (flag-fail "-shutdown_timeout must not be negative"))
     (multiple-value-bind (host port) (split-host-port (getf options :addr))
       (serve host port (getf options :shutdown-timeout) (getf options :fast-inline))))
   :description "Serves the handler-cost service (Fast, Sleep, Spin; raw octets) with clgrpc at
its defaults (with -fast_inline, Fast on the reactor).  Prints \"listening on HOST:PORT\" to stdout once bound, then a
\"runtime ...\" line, answers SIGWINCH with a \"heap live=N\" line, and stops
gracefully on SIGINT or SIGTERM."))

(defun serve (host port grace fast-inline)
  "Serve on HOST:PORT until SIGINT or SIGTERM, Fast declared :inline if
FAST-INLINE; returns the exit code."
  (handler-case
      (let* ((server (handlercost:register-handlers (clgrpc.grpc:make-server) :fast-inline fast-inline))
             (bound (clgrpc.grpc:server-start server :host host :port port)))
        (clgrpc.grpc:serve-until-stopped server (format nil "listening on ~A:~D" host bound))
        (format *error-output* "handlercost server: shutting down~%")
        (clgrpc.grpc:server-stop server :grace grace)
        (finish-output)
        (finish-output *error-output*)
        (sb-ext:exit :code 0 :abort t))
    (error (e)
      (format *error-output* "handlercost server: ~A~%" e)
      1)))
