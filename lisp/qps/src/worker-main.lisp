;;;; The qps worker program, with the command line of grpc-go's
;;;; benchmark/worker:
;;;;
;;;;   worker [-driver_port N] [-server_port N] [-host ADDRESS]
;;;;
;;;; It serves grpc.testing.WorkerService on ADDRESS:N (all interfaces by
;;;; default, as gRPC's workers do, so that a driver on another host can
;;;; reach it) until a driver calls QuitWorker, or until SIGINT or SIGTERM.

(in-package #:qps)

(defparameter *worker-flags*
  (list (flag-spec "driver_port" :int 10000 "`port` for communication with the driver; 0 picks a free one")
        (flag-spec "server_port" :int 0
                   "`port` for the benchmark server if the server config names none; 0 picks a free one")
        (flag-spec "host" :string "0.0.0.0"
                   "the `address` the worker and its benchmark servers listen on")))

(defvar *signalled* nil)

(defun serve-until-quit (host port server-port)
  (let ((worker (start-worker :host host :port port :server-port server-port)))
    (flet ((request-stop (signal info context)
             (declare (ignore signal info context))
             (setf *signalled* t)))
      ;; A signal handler only sets a flag: it may interrupt any thread,
      ;; even one holding a lock the shutdown needs.
      (sb-sys:enable-interrupt sb-unix:sigint #'request-stop)
      (sb-sys:enable-interrupt sb-unix:sigterm #'request-stop))
    (log-line "listening on ~A:~D for a driver (CPUs ~A)"
              host (worker-port worker) (format-cpu-list (usable-cpus)))
    (loop until (or *signalled* (wait-for-quit worker 0.1)))
    (stop-worker worker)
    (finish-output *error-output*)
    (sb-ext:exit :code 0 :abort t)))

(defun worker-main ()
  "Entry point of the worker executable; returns the exit code."
  (call-with-command-line
   *worker-flags* (rest sb-ext:*posix-argv*)
   (lambda (options rest given)
     (declare (ignore given))
     (cond (rest (flag-fail "unexpected arguments: [~{~S~^ ~}]" rest))
           ((not (<= 0 (getf options :driver-port) 65535))
            (flag-fail "-driver_port ~D is not from 0 to 65535" (getf options :driver-port)))
           ((not (<= 0 (getf options :server-port) 65535))
            (flag-fail "-server_port ~D is not from 0 to 65535" (getf options :server-port))))
     (handler-case (serve-until-quit (getf options :host) (getf options :driver-port)
                                     (getf options :server-port))
       (error (e)
         (log-line "~A" e)
         1)))
   :description "A qps worker on clgrpc: serves grpc.testing.WorkerService, through which a driver
(gRPC's qps_json_driver, or //go/qps:driver) runs it as a benchmark server or client of
grpc.testing.BenchmarkService."))
