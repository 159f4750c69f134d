;;;; rpc_soak and channel_soak: many large_unary calls, on one channel or on
;;;; a new channel each, within per-call latency and overall time limits.

(in-package #:interop)

(defstruct soak
  (iterations 10 :type (integer 0))
  (max-failures 0 :type (integer 0))
  (max-latency 1 :type real)            ; seconds per call
  (overall-timeout 10 :type real))      ; seconds

(defun soak (channel-for-iteration settings)
  "Run SETTINGS' iterations; CHANNEL-FOR-ITERATION returns (values channel
close-p) for each.  Fails when more calls fail or are too slow than
allowed, or the time runs out first."
  (let ((start (get-internal-real-time))
        (failures 0) (done 0))
    (flet ((elapsed (since) (/ (- (get-internal-real-time) since) internal-time-units-per-second)))
      (dotimes (i (soak-iterations settings))
        (when (> (elapsed start) (soak-overall-timeout settings))
          (return))
        (let ((begin (get-internal-real-time)))
          (multiple-value-bind (channel close-p) (funcall channel-for-iteration)
            (unwind-protect
                 (let ((ok (handler-case (progn (large-unary channel) t)
                             (error () nil))))
                   (unless (and ok (<= (elapsed begin) (soak-max-latency settings)))
                     (incf failures)))
              (when close-p
                (clgrpc.grpc:channel-close channel)))))
        (incf done))
      (cond ((< done (soak-iterations settings))
             (fail "only ~D of ~D iterations in ~As" done (soak-iterations settings)
                   (soak-overall-timeout settings)))
            ((> failures (soak-max-failures settings))
             (fail "~D of ~D iterations failed or were slower than ~As, at most ~D may"
                   failures done (soak-max-latency settings) (soak-max-failures settings)))))))

(defun rpc-soak (channel settings)
  (soak (lambda () (values channel nil)) settings))

(defun channel-soak (new-channel settings)
  "NEW-CHANNEL makes a channel to the server."
  (soak (lambda () (values (funcall new-channel) t)) settings))
