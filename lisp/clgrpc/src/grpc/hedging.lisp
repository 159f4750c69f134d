;;;; Hedging (gRFC A6): a unary call whose method has a hedging policy is
;;;; sent again, while the first attempt is still out, every hedgingDelay
;;;; until one answers or maxAttempts are out.  The first attempt to end
;;;; with OK wins, and the others are cancelled.  An attempt that fails
;;;; with one of nonFatalStatusCodes sends the next at once; any other
;;;; failure ends the call with its status, cancelling the rest.  Each
;;;; hedge carries grpc-previous-rpc-attempts; the channel's throttle
;;;; counts the outcomes and stops hedges while half its tokens are gone; a
;;;; pushback delays the next hedge, or forbids it if not a number.  All
;;;; attempts share the call's deadline.  Streaming calls are not hedged.

(in-package #:clgrpc.grpc)

(defun %attempt-outcome (attempt)
  "Lock held or not: ATTEMPT's status code, or NIL while it runs."
  (with-call-conn-lock (attempt)
    (call-status attempt)))

(defun %hedge-pushback-ms (attempt)
  "(values milliseconds present) of ATTEMPT's grpc-retry-pushback-ms."
  (%pushback-ms (call-trailers attempt)))

(defun hedged-unary-call (channel path request policy encoder decoder timeout metadata compress
                          wait-for-ready hooks)
  "A unary call made under the hedging POLICY: (values response call) of
the attempt that answered."
  (let* ((deadline (and timeout (+ (now-us) (round (* timeout 1000000)))))
         (done (sb-thread:make-semaphore :name "hedged call"))
         (throttle (let ((config (channel-service-config channel)))
                     (and config (service-config-throttle config))))
         (attempts '())
         (next-at (now-us))
         (last-failed nil))
    (labels ((left-seconds ()
               (and deadline (max 1/1000000 (/ (- deadline (now-us)) 1000000))))
             (start-attempt ()
               (let ((attempt (start-call channel path :unary encoder decoder (left-seconds) metadata request
                                          compress wait-for-ready
                                          (list (lambda (call)
                                                  (declare (ignore call))
                                                  (sb-thread:signal-semaphore done)))
                                          (length attempts))))
                 (push attempt attempts)
                 (setf next-at (+ (now-us) (hedging-policy-delay-us policy)))))
             (finish (winner)
               (dolist (other attempts)
                 (unless (eq other winner)
                   (call-cancel other)))
               (dolist (hook hooks)
                 (funcall hook winner))
               (values (await-status winner) winner)))
      (start-attempt)
      (loop
        ;; An attempt that ended decides, in the order they ended.
        (dolist (attempt (reverse attempts))
          (let ((code (%attempt-outcome attempt)))
            (when (and code (not (member attempt last-failed)))
              (cond ((= code +ok+)
                     (throttle-record throttle t)
                     (return-from hedged-unary-call (finish attempt)))
                    ((member code (hedging-policy-non-fatal-codes policy))
                     (push attempt last-failed)
                     (multiple-value-bind (pushback present) (%hedge-pushback-ms attempt)
                       (cond ((and throttle (not (throttle-record throttle nil)))
                              (setf next-at nil))
                             ((and present (null pushback)) (setf next-at nil))
                             (present (setf next-at (+ (now-us) (* 1000 pushback))))
                             ;; A non-fatal failure sends the next at once.
                             (next-at (setf next-at (now-us))))))
                    (t (return-from hedged-unary-call (finish attempt)))))))
        (when (= (length last-failed) (length attempts))
          ;; Every attempt out has failed: the last one's status, unless
          ;; another may still be sent.
          (when (or (null next-at) (>= (length attempts) (hedging-policy-max-attempts policy))
                    (and deadline (>= next-at deadline)))
            (return-from hedged-unary-call (finish (first last-failed)))))
        (when (and next-at (< (length attempts) (hedging-policy-max-attempts policy))
                   (>= (now-us) next-at)
                   (or (null deadline) (< (now-us) deadline)))
          (start-attempt))
        ;; Wait for an attempt to end, or for the next hedge to be due.
        (let ((wake (if (and next-at (< (length attempts) (hedging-policy-max-attempts policy)))
                        next-at
                        (or deadline (+ (now-us) 1000000)))))
          (sb-thread:wait-on-semaphore done :timeout (max 0.0001d0 (/ (- wake (now-us)) 1d6))))))))
