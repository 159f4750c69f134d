;;;; A benchmark server: BenchmarkService on clgrpc, at clgrpc's default
;;;; settings, started and measured for the driver.

(in-package #:qps)

(defstruct (benchmark-server (:constructor %make-benchmark-server))
  server
  (port 0 :type fixnum)
  (cores 1 :type fixnum)
  (lock (sb-thread:make-mutex :name "benchmark server stats"))
  (mark (make-usage-mark)))

(defun start-benchmark-server (config &key host default-port worker-cpus)
  "Start a server as CONFIG (a checked ServerConfig) says, on HOST, at its
port or else DEFAULT-PORT (0: any).  With core_list or core_limit, the
whole worker process is bound to those CPUs until the server stops."
  (let* ((plan (check-server-config config worker-cpus))
         (cpus (getf plan :cpus))
         (port (if (plusp (getf plan :port)) (getf plan :port) default-port)))
    (when cpus
      (unless (pin-process cpus)
        (invalid (if (server-config-core-list config) "server_config.core_list" "server_config.core_limit")
                 "cannot bind this worker to CPUs ~A" (format-cpu-list cpus))))
    (let ((started nil))
      (unwind-protect
           (let ((server (clgrpc.grpc:make-server)))
             (register-benchmark-handlers server :each-message (getf plan :each-message))
             (prog1 (%make-benchmark-server
                     :server server
                     :port (handler-case (clgrpc.grpc:server-start server :host host :port port)
                             (error (e)
                               (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+unavailable+
                                                             "cannot serve on ~A:~D: ~A" host port e)))
                     :cores (length (or cpus worker-cpus)))
               (setf started t)))
        ;; Whatever failed, the worker gets its own CPUs back.
        (when (and cpus (not started))
          (pin-process worker-cpus))))))

(defun benchmark-server-stats (s reset)
  "ServerStats since the last reset; with RESET, a new interval starts."
  (sb-thread:with-mutex ((benchmark-server-lock s))
    (let ((now (make-usage-mark)))
      (multiple-value-bind (elapsed user system host-total host-idle)
          (usage-since (benchmark-server-mark s) now)
        (when reset
          (setf (benchmark-server-mark s) now))
        (make-server-stats :time-elapsed elapsed :time-user user :time-system system
                           :total-cpu-time host-total :idle-cpu-time host-idle)))))

(defun benchmark-server-status (s reset)
  (make-server-status :stats (benchmark-server-stats s reset)
                      :port (benchmark-server-port s)
                      :cores (benchmark-server-cores s)))

(defun stop-benchmark-server (s worker-cpus)
  "Stop the server (calls in flight get a second) and give the worker back
its own CPUs."
  (clgrpc.grpc:server-stop (benchmark-server-server s) :grace 1)
  (pin-process worker-cpus))
