;;;; Client retries under a retry policy (gRFC A6): whether a failed attempt
;;;; is tried again, after what delay, and the channel's throttle.
;;;;
;;;; An attempt that the server answered with a status of the policy's
;;;; retryableStatusCodes is tried again unless the call is committed: the
;;;; server sent response headers (so a message may have reached the
;;;; application), or its request messages outgrew what the call keeps to
;;;; send again (+RETRY-BUFFER-LIMIT+).  An attempt reset or cut off before
;;;; any response counts with the status its failure maps to.  The delay is
;;;; random below min(initialBackoff x multiplier^(n-1), maxBackoff), or the
;;;; server's grpc-retry-pushback-ms; a pushback that is not a number
;;;; forbids the retry.  No retry starts past the call's deadline, which
;;;; covers every attempt.  Transparent retries (a stream refused
;;;; unprocessed, client-callbacks.lisp) do not count among the policy's
;;;; attempts.

(in-package #:clgrpc.grpc)

(defvar *jitter-random* nil
  "The random state of backoff jitter, seeded in the running process on
first use: SBCL's default state is saved in the executable, so every
client would draw the same delays and retry in step.")
(defvar *jitter-lock* (sb-thread:make-mutex :name "jitter"))

(defun jitter-random (limit)
  "A random number below LIMIT (a positive integer or float), from a
state seeded per process."
  (sb-thread:with-mutex (*jitter-lock*)
    (random limit (or *jitter-random* (setf *jitter-random* (make-random-state t))))))

(defconstant +retry-buffer-limit+ (* 256 1024)
  "Octets of request messages a streaming call keeps to send again on a
retry; past them it is committed to its attempt (grpc-go's per-call
retry buffer).")

(defun throttle-record (throttle success)
  "Count an attempt's outcome; true while retries are allowed."
  (when throttle
    (sb-thread:with-mutex ((retry-throttle-lock throttle))
      (let ((max (retry-throttle-max-tokens throttle)))
        (setf (retry-throttle-tokens throttle)
              (if success
                  (min (float max 1d0) (+ (retry-throttle-tokens throttle)
                                          (retry-throttle-token-ratio throttle)))
                  (max 0d0 (1- (retry-throttle-tokens throttle)))))
        (> (retry-throttle-tokens throttle) (/ max 2))))))

(defun throttle-allows-p (throttle)
  "Whether THROTTLE lets another attempt go, taking nothing."
  (sb-thread:with-mutex ((retry-throttle-lock throttle))
    (> (retry-throttle-tokens throttle) (/ (retry-throttle-max-tokens throttle) 2))))

(defun retry-throttle-token-count (throttle)
  "The throttle's tokens now (a double-float), for tests and metrics."
  (sb-thread:with-mutex ((retry-throttle-lock throttle))
    (retry-throttle-tokens throttle)))

(defun %pushback-ms (trailers)
  "The server's grpc-retry-pushback-ms: (values milliseconds present)
where milliseconds is NIL when the value forbids a retry."
  (let ((entry (assoc "grpc-retry-pushback-ms" trailers :test #'string=)))
    (if (not entry)
        (values nil nil)
        (let ((text (cdr entry)))
          (values (and (stringp text) (plusp (length text)) (<= (length text) 10)
                       (every #'digit-char-p text)
                       (parse-integer text))
                  t)))))

(defun %backoff-us (policy step)
  "A6's randomised exponential backoff before retry number STEP (from 1)."
  (let ((ceiling-us (min (retry-policy-max-backoff-us policy)
                         (* (retry-policy-initial-backoff-us policy)
                            (expt (retry-policy-backoff-multiplier policy) (1- step))))))
    (jitter-random (max 1 (round ceiling-us)))))

(defun call-retry-throttle-or-policy-p (call)
  (or (call-retry-policy call) (call-retry-throttle call)))

(defun retry-delay-us (call code trailers)
  "Lock held: the server ended CALL's attempt with CODE.  Counts the
outcome against the channel's throttle (every call's success, and the
failures a retry policy names) and returns the microseconds to wait before
the next attempt, or NIL when the call ends with CODE."
  (let* ((policy (call-retry-policy call))
         (retryable (and policy (member code (retry-policy-retryable-codes policy))))
         (throttle (call-retry-throttle call)))
    (multiple-value-bind (pushback-ms pushback-present) (%pushback-ms trailers)
      (let ((allowed (cond ((= code +ok+) (throttle-record throttle t) nil)
                           ((or retryable (and policy pushback-present (null pushback-ms)))
                            (or (null throttle) (throttle-record throttle nil))))))
        (when (and retryable allowed
                   (not (call-committed call))
                   (< (1+ (call-retries call)) (retry-policy-max-attempts policy))
                   (not (and pushback-present (null pushback-ms))))
          (let ((delay (if pushback-present
                           (progn (setf (call-backoff-step call) 0)
                                  (* pushback-ms 1000))
                           (%backoff-us policy (incf (call-backoff-step call)))))
                (deadline (call-%deadline call)))
            (unless (and deadline (>= (+ (now-us) delay) deadline))
              delay)))))))

(defun commit-call (call)
  "Lock held: CALL stays on the attempt it is on; what it kept to send
again goes."
  (setf (call-committed call) t
        (call-replay call) nil
        (call-replay-octets call) 0))

(defun keep-for-retry (call octets end)
  "Lock held: a request message CALL sends, OCTETS[0,END), kept (copied) to
be sent again by a retry while the call is not committed."
  (unless (or (call-committed call) (null (call-retry-policy call)))
    (if (> (+ (call-replay-octets call) end) +retry-buffer-limit+)
        (commit-call call)
        (progn (push (subseq octets 0 end) (call-replay call))
               (incf (call-replay-octets call) end)))))

(defun reset-for-retry (call)
  "Lock held: CALL's attempt is over and another will follow: forget what
the finished one received."
  (setf (call-head-received call) nil
        (call-trailers call) nil
        (call-%response-metadata call) nil
        (call-recv-gzip call) nil
        (call-inbound-done call) nil
        (call-asm-prefix call) 0)
  (when (call-inbox call)
    (fifo-clear (call-inbox call))))
