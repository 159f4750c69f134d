;;;; grpc.testing.WorkerService: what a driver calls to run this worker as
;;;; a benchmark server (RunServer) or client (RunClient), to ask its core
;;;; count and to make it quit.
;;;;
;;;; RunServer and RunClient are streams: a setup message starts the
;;;; server or client, each mark answers with the statistics since the last
;;;; reset, and the end of the stream (or its cancellation, or any failure)
;;;; stops it.  A setup the worker cannot honour ends the stream with
;;;; INVALID_ARGUMENT naming the field.

(in-package #:qps)

(defstruct (worker (:constructor %make-worker))
  server                                ; the clgrpc server of WorkerService
  (port 0 :type fixnum)
  (host "0.0.0.0" :type string)         ; where benchmark servers listen
  (server-port 0 :type fixnum)          ; their port when the setup names none
  (cpus '() :type list)                 ; the CPUs the worker started on
  (quit (sb-thread:make-semaphore :name "qps worker quit")))

(defun log-line (format-control &rest args)
  (format *error-output* "qps worker: ~?~%" format-control args)
  (finish-output *error-output*))

(defun expect-mark (args thing)
  (let ((mark (funcall (if (eq thing :server) #'server-args-mark #'client-args-mark) args)))
    (unless mark
      (invalid "argtype" "neither setup nor mark"))
    mark))

(defun run-server (worker call)
  (let ((bs nil))
    (unwind-protect
         (loop for args = (clgrpc.grpc:call-recv call)
               while args
               do (cond ((server-args-setup args)
                         (when bs
                           (log-line "a new server setup: stopping the running server")
                           (stop-benchmark-server (shiftf bs nil) (worker-cpus worker)))
                         (setf bs (start-benchmark-server (server-args-setup args)
                                                          :host (worker-host worker)
                                                          :default-port (worker-server-port worker)
                                                          :worker-cpus (worker-cpus worker)))
                         (log-line "benchmark server on port ~D, ~D cores"
                                   (benchmark-server-port bs) (benchmark-server-cores bs))
                         (clgrpc.grpc:call-send call (benchmark-server-status bs nil)))
                        (t
                         (let ((mark (expect-mark args :server)))
                           (unless bs
                             (invalid "mark" "no server is running: the first message must be a setup"))
                           (clgrpc.grpc:call-send call (benchmark-server-status bs (mark-reset mark)))))))
      (when bs
        (log-line "stopping the benchmark server")
        (stop-benchmark-server bs (worker-cpus worker))))))

(defun run-client (worker call)
  (let ((bc nil))
    (unwind-protect
         (loop for args = (clgrpc.grpc:call-recv call)
               while args
               do (cond ((client-args-setup args)
                         (when bc
                           (log-line "a new client setup: stopping the running client")
                           (stop-benchmark-client (shiftf bc nil) (worker-cpus worker)))
                         (setf bc (start-benchmark-client (client-args-setup args) (worker-cpus worker)))
                         (log-line "benchmark client: ~D calls on ~D channels"
                                   (length (benchmark-client-slots bc))
                                   (length (benchmark-client-channels bc)))
                         (clgrpc.grpc:call-send call (make-client-status
                                                      :stats (benchmark-client-stats bc nil))))
                        (t
                         (let ((mark (expect-mark args :client)))
                           (unless bc
                             (invalid "mark" "no client is running: the first message must be a setup"))
                           (clgrpc.grpc:call-send call (make-client-status
                                                        :stats (benchmark-client-stats bc (mark-reset mark))))))))
      (when bc
        (log-line "stopping the benchmark client")
        (stop-benchmark-client bc (worker-cpus worker))))))

(defun start-worker (&key (host "0.0.0.0") (port 10000) (server-port 0))
  "A running worker: WorkerService on HOST:PORT (0 picks a free port).
Benchmark servers listen on HOST too, at SERVER-PORT unless their setup
names a port."
  (let* ((server (clgrpc.grpc:make-server))
         (worker (%make-worker :server server :host host :server-port server-port
                               :cpus (usable-cpus))))
    (register-worker-service server
                             :run-server (lambda (call) (run-server worker call))
                             :run-client (lambda (call) (run-client worker call))
                             :core-count (lambda (request call)
                                           (declare (ignore request call))
                                           ;; The worker's own CPUs, not those a
                                           ;; running benchmark has bound it to.
                                           (make-core-response :cores (length (worker-cpus worker))))
                             :quit-worker (lambda (request call)
                                            (declare (ignore request call))
                                            (log-line "quitting, as the driver asks")
                                            (sb-thread:signal-semaphore (worker-quit worker))
                                            (make-void)))
    (setf (worker-port worker) (clgrpc.grpc:server-start server :host host :port port))
    worker))

(defun wait-for-quit (worker &optional timeout)
  "True once QuitWorker was called (NIL after TIMEOUT seconds)."
  (sb-thread:wait-on-semaphore (worker-quit worker) :timeout timeout))

(defun stop-worker (worker)
  "Stop serving; calls in flight, the QuitWorker answer among them, get a
second to finish."
  (clgrpc.grpc:server-stop (worker-server worker) :grace 1))
