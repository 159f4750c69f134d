;;;; The server's life: listening, accepting connections (one thread), and
;;;; a graceful stop.

(in-package #:clgrpc.grpc)

(defun server-on-close (conn)
  (let ((server (clgrpc.http2:connection-user conn)))
    (sb-thread:with-mutex ((server-lock server))
      (remhash conn (server-connections server)))))

(defun accept-one (server socket)
  "Serve the accepted SOCKET, or close it at once when the server is full
or stopping."
  (let ((conn nil))
    (sb-thread:with-mutex ((server-lock server))
      (cond ((not (eq (server-state server) :running)))
            ((and (server-max-connections server)
                  (>= (hash-table-count (server-connections server))
                      (the fixnum (server-max-connections server))))
             (incf (server-refused-connections server)))
            (t
             (setf conn (apply #'clgrpc.http2:make-connection socket :server
                               :on-headers #'server-on-headers :on-data #'server-on-data
                               :on-reset #'server-on-reset :on-abandon #'server-on-abandon
                               :on-close #'server-on-close
                               :user server :executor (server-executor server)
                               :tls (and (server-tls server)
                                         (clgrpc.tls:make-tls-session (server-tls server)))
                               (server-connection-options server))
                   (gethash conn (server-connections server)) t))))
    (if conn
        (handler-case (clgrpc.http2:connection-start conn)
          (error () (clgrpc.http2:connection-close conn)))
        (clgrpc.net:socket-close socket))))

(defun accept-loop (server)
  (let ((listener (server-listener server)))
    (loop
      (let ((socket (clgrpc.net:tcp-accept listener)))
        (unless socket
          (return))
        ;; Nothing one connection does may stop the server accepting: an
        ;; unexpected condition (out of descriptors, say) costs that
        ;; connection only, and is logged.
        (handler-case (accept-one server socket)
          (serious-condition (e)
            (log-line "accepting a connection failed: ~A" e)
            (clgrpc.net:socket-close socket)))))))

(defun server-start (server &key (host "127.0.0.1") (port 0))
  "Listen on HOST:PORT (0 picks a free port) and serve.  Returns the port."
  (unless (eq (server-state server) :new)
    (error "server already started"))
  (clgrpc.net:raise-open-file-limit)
  (ensure-heap-guard)
  (let ((listener (clgrpc.net:tcp-listen host port)))
    (setf (server-listener server) listener
          (server-port server) (clgrpc.net:socket-local-port listener)
          (server-state server) :running
          (server-accept-thread server)
          (sb-thread:make-thread #'accept-loop :name "grpc accept" :arguments (list server)))
    (server-port server)))

(defun server-runtime-line (server)
  "One line naming what SERVER runs with, as this process sized it: the
parallelism it counted (USABLE-CPU-COUNT: its handler lanes follow it), the
CPUs its affinity allows, its cgroup's CPU limit (0: none), its reactors,
its handler threads' ceiling, and SBCL's heap limit and collection interval
in octets.  A benchmark prints it beside Go's GOMAXPROCS and GOGC, so that a
comparison shows each side's parallelism as the server saw it."
  (format nil "runtime cpus=~D numcpu=~D cpu_limit=~,2F reactors=~D handler_threads_max=~D heap_max=~D gc_interval=~D"
          (usable-cpu-count)
          (affinity-cpu-count)
          (or (cgroup-cpu-limit) 0)
          (clgrpc.http2:reactor-count)
          (executor-max-threads (server-executor server))
          (sb-ext:dynamic-space-size)
          (sb-ext:bytes-consed-between-gcs)))

(defun server-connection-count (server)
  (sb-thread:with-mutex ((server-lock server))
    (hash-table-count (server-connections server))))

(defun server-refused-connection-count (server)
  "Connections closed at once because MAX-CONNECTIONS was reached."
  (sb-thread:with-mutex ((server-lock server))
    (server-refused-connections server)))

(defun %seconds-left (deadline)
  (max 0 (/ (- deadline (now-us)) 1d6)))

(defun server-stop (server &key (grace 5))
  "Stop accepting, send GOAWAY on every connection, let calls in flight
finish, then close everything: GRACE seconds in all, one deadline for the
whole stop.  A connection closes by itself once its last call has ended
and its output is written; those still busy at the deadline are closed."
  (when (eq (server-state server) :running)
    (setf (server-state server) :stopping)
    (let ((deadline (+ (now-us) (round (* grace 1000000))))
          (listener (server-listener server)))
      (clgrpc.net:fd-shutdown (clgrpc.net:socket-fd listener) :both)
      (sb-thread:join-thread (server-accept-thread server) :default nil
                                                           :timeout (max 0.1 (%seconds-left deadline)))
      (clgrpc.net:socket-close listener)
      (let ((connections (sb-thread:with-mutex ((server-lock server))
                           (loop for conn being the hash-keys of (server-connections server)
                                 collect conn))))
        (dolist (conn connections)
          (clgrpc.http2:connection-send-goaway conn))
        (dolist (conn connections)
          (clgrpc.http2:connection-wait-closed conn (%seconds-left deadline)))
        (dolist (conn connections)
          (clgrpc.http2:connection-close conn))
        ;; Their reactors release the sockets at once: a last short wait,
        ;; shared by all of them.
        (let ((last (max deadline (+ (now-us) 100000))))
          (dolist (conn connections)
            (clgrpc.http2:connection-wait-closed conn (%seconds-left last)))))
      (shutdown-executor (server-executor server) :timeout (%seconds-left deadline)))
    (setf (server-state server) :stopped))
  nil)
