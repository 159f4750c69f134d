;;;; Hedging (gRFC A6): a unary call whose method has a hedging policy is
;;;; sent again, while the first attempt is still out, every hedgingDelay
;;;; until one answers or maxAttempts are out.  The first attempt to
;;;; receive response headers (or end with OK) is committed, and the others
;;;; are cancelled.  An attempt that fails
;;;; with one of nonFatalStatusCodes sends the next at once; any other
;;;; failure ends the call with its status, cancelling the rest.  Each
;;;; hedge carries grpc-previous-rpc-attempts; the channel's throttle
;;;; counts the outcomes (a success once, through the attempt's own
;;;; accounting) and no hedge goes while half its tokens are gone; a
;;;; pushback delays the next hedge, or forbids it if not a number.  All
;;;; attempts share the call's deadline.  Streaming calls are not hedged.

(in-package #:clgrpc.grpc)

(defun %attempt-outcome (attempt)
  "ATTEMPT's status code, or NIL while it runs; :COMMITTED once its
response headers have come (A6: it is the call's now)."
  (with-call-conn-lock (attempt)
    (cond ((call-status attempt))
          ((call-head-received attempt) :committed))))

(defun %hedge-pushback-ms (attempt)
  "(values milliseconds present) of ATTEMPT's grpc-retry-pushback-ms."
  (%pushback-ms (call-trailers attempt)))

(defun %carry-out-transparent-retries (attempts)
  "An attempt the server refused unprocessed waits for a thread to open it
again: this one."
  (dolist (attempt attempts)
    (when (eq t (with-call-conn-lock (attempt) (call-retry-pending attempt)))
      (%retry-call-if-pending attempt))))

(defun hedged-unary-call (channel path request policy encoder decoder timeout metadata compress
                          wait-for-ready hooks attempt-hooks)
  "A unary call made under the hedging POLICY: (values response call) of
the attempt that answered."
  (let* ((deadline (and timeout (+ (now-us) (round (* timeout 1000000)))))
         (done (sb-thread:make-semaphore :name "hedged call"))
         (throttle (let ((config (channel-service-config channel)))
                     (and config (service-config-throttle config))))
         (attempts '())
         (winner nil)
         (next-at (now-us))
         (failed '()))
    (labels ((left-seconds ()
               (and deadline (max 1/1000000 (/ (- deadline (now-us)) 1000000))))
             (may-hedge-p ()
               (and next-at (< (length attempts) (hedging-policy-max-attempts policy))
                    (or (null deadline) (< next-at deadline))
                    (or (null throttle) (throttle-allows-p throttle))))
             (start-attempt ()
               (handler-case
                   (let ((attempt (start-call channel path :unary encoder decoder (left-seconds) metadata
                                              request compress wait-for-ready
                                              (list (lambda (call)
                                                      (declare (ignore call))
                                                      (sb-thread:signal-semaphore done)))
                                              (length attempts) attempt-hooks)))
                     (push attempt attempts)
                     (setf next-at (+ (now-us) (hedging-policy-delay-us policy))))
                 (grpc-error (e)
                   ;; The first attempt's failure is the call's; a later
                   ;; hedge that cannot start just ends the hedging.
                   (when (null attempts)
                     (error e))
                   (setf next-at nil))))
             (finish (attempt)
               (setf winner attempt)
               ;; The call's finish functions see the winner end (its status
               ;; is not yet known when it commits on its headers).
               (dolist (hook hooks)
                 (call-on-finish attempt hook))
               (values (await-status attempt) attempt)))
      (unwind-protect
           (progn
             (start-attempt)
             (loop
               (%carry-out-transparent-retries attempts)
               ;; An attempt that ended, or began its response, decides.
               (dolist (attempt (reverse attempts))
                 (let ((outcome (%attempt-outcome attempt)))
                   (when (and outcome (not (member attempt failed)))
                     (cond ((or (eq outcome :committed) (= outcome +ok+))
                            (return-from hedged-unary-call (finish attempt)))
                           ((member outcome (hedging-policy-non-fatal-codes policy))
                            (push attempt failed)
                            (when throttle
                              (throttle-record throttle nil))
                            (multiple-value-bind (pushback present) (%hedge-pushback-ms attempt)
                              (cond ((and present (null pushback)) (setf next-at nil))
                                    (present (setf next-at (+ (now-us) (* 1000 pushback))))
                                    ;; A non-fatal failure sends the next at once.
                                    (next-at (setf next-at (now-us))))))
                           (t (return-from hedged-unary-call (finish attempt)))))))
               (when (and (= (length failed) (length attempts)) (not (may-hedge-p)))
                 ;; Every attempt out failed and no other may be sent.
                 (return-from hedged-unary-call (finish (first failed))))
               (when (and (may-hedge-p) (>= (now-us) next-at))
                 (start-attempt))
               ;; Wait for an attempt to end, or for the next hedge to be due.
               (let ((wake (if (may-hedge-p) next-at (or deadline (+ (now-us) 1000000)))))
                 (sb-thread:wait-on-semaphore done :timeout (max 0.0001d0 (/ (- wake (now-us)) 1d6))))))
        ;; Whatever ends the call, the attempts still out go.
        (dolist (attempt attempts)
          (unless (eq attempt winner)
            (call-cancel attempt)))))))
