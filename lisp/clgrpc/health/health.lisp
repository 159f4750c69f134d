;;;; grpc.health.v1.Health for clgrpc servers: Check, Watch and List, as
;;;; grpc-go's health server answers them.  Kubernetes' gRPC probes,
;;;; grpc_health_probe and load balancers call it.
;;;;
;;;;   (let ((health (clgrpc.health:make-health)))
;;;;     (clgrpc.health:register-health server health)
;;;;     (clgrpc.health:set-serving-status health "" :serving)
;;;;     ...
;;;;     (clgrpc.health:shutdown-health health)   ; before a graceful stop
;;;;     (clgrpc.grpc:server-stop server :grace 5))

(defpackage #:clgrpc.health
  (:use #:cl)
  (:documentation "The standard gRPC health service (grpc.health.v1.Health) for a clgrpc server.")
  (:export #:health #:make-health #:register-health #:set-serving-status #:serving-status
           #:shutdown-health))

(in-package #:clgrpc.health)

(defconstant +watch-poll-seconds+ 1
  "How often a Watch call looks whether its client has gone, when no status changes.")

(defstruct (health (:constructor make-health ()))
  "The serving status of a server's services (\"\" is the whole server)."
  (lock (sb-thread:make-mutex :name "health"))
  (changed (sb-thread:make-waitqueue))
  ;; service name -> :serving or :not-serving
  (statuses (make-hash-table :test 'equal))
  ;; After SHUTDOWN-HEALTH, every status reads :not-serving for good.
  (shut-down nil))

(defun set-serving-status (health service status)
  "Set SERVICE's status (:SERVING or :NOT-SERVING) and tell its watchers.
Ignored after SHUTDOWN-HEALTH, as grpc-go's server ignores it."
  (check-type status (member :serving :not-serving))
  (sb-thread:with-mutex ((health-lock health))
    (unless (health-shut-down health)
      (setf (gethash service (health-statuses health)) status)
      (sb-thread:condition-broadcast (health-changed health))))
  status)

(defun shutdown-health (health)
  "Report every service NOT_SERVING from now on: called as a graceful stop
begins, so that probes and load balancers send no new calls while those in
flight finish."
  (sb-thread:with-mutex ((health-lock health))
    (setf (health-shut-down health) t)
    (loop for service being the hash-keys of (health-statuses health)
          do (setf (gethash service (health-statuses health)) :not-serving))
    (sb-thread:condition-broadcast (health-changed health))))

(defun %status (health service)
  "SERVICE's status, :SERVICE-UNKNOWN if it was never set (lock held)."
  (gethash service (health-statuses health) :service-unknown))

(defun serving-status (health service)
  "SERVICE's status: :SERVING, :NOT-SERVING or :SERVICE-UNKNOWN."
  (sb-thread:with-mutex ((health-lock health))
    (%status health service)))

(defun check (health request call)
  (declare (ignore call))
  (let ((status (serving-status health (clgrpc.health.proto:health-check-request-service request))))
    (when (eq status :service-unknown)
      (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+not-found+ "unknown service"))
    (clgrpc.health.proto:make-health-check-response :status status)))

(defun watch (health request call)
  "Send the service's status now and after every change, until the client
goes.  An unknown service is SERVICE_UNKNOWN, not an error: it may appear."
  (let ((service (clgrpc.health.proto:health-check-request-service request))
        (sent nil))
    (loop until (clgrpc.grpc:call-cancelled-p call)
          do (let ((status (sb-thread:with-mutex ((health-lock health))
                             (loop while (and (eq (%status health service) sent)
                                              (not (clgrpc.grpc:call-cancelled-p call)))
                                   do (sb-thread:condition-wait (health-changed health)
                                                                (health-lock health)
                                                                :timeout +watch-poll-seconds+))
                             (%status health service))))
               (unless (or (eq status sent) (clgrpc.grpc:call-cancelled-p call))
                 (clgrpc.grpc:call-send call (clgrpc.health.proto:make-health-check-response
                                              :status status))
                 (setf sent status))))))

(defun list-statuses (health request call)
  (declare (ignore request call))
  (sb-thread:with-mutex ((health-lock health))
    (clgrpc.health.proto:make-health-list-response
     :statuses (loop for service being the hash-keys of (health-statuses health)
                       using (hash-value status)
                     collect (cons service (clgrpc.health.proto:make-health-check-response
                                            :status status))))))

(defun register-health (server health)
  "Serve grpc.health.v1.Health on SERVER from HEALTH."
  (clgrpc.health.proto:register-health
   server
   :check (lambda (request call) (check health request call))
   :watch (lambda (request call) (watch health request call))
   :list (lambda (request call) (list-statuses health request call)))
  server)
