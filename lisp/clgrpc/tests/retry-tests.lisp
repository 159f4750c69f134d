;;;; The service config (parsing, and which entry a method gets) and what
;;;; it makes a client do against clgrpc's own server: timeouts, retries
;;;; under a retry policy with their grpc-previous-rpc-attempts, streaming
;;;; requests sent again, the throttle, and wait-for-ready.  The same
;;;; behaviour against grpc-go's server is tested in go/features.

(in-package #:clgrpc.tests)

(def-suite :clgrpc.retry :in :clgrpc)
(in-suite :clgrpc.retry)

(defun config-error-reason (json)
  "The reason PARSE-SERVICE-CONFIG gives for refusing JSON, or NIL."
  (handler-case (progn (clgrpc.grpc:parse-service-config json) nil)
    (clgrpc.grpc:service-config-error (e) (clgrpc.grpc:service-config-error-reason e))))

(test service-config-entries-apply-by-method-then-service-then-default
  (let* ((config (clgrpc.grpc:parse-service-config
                  "{\"methodConfig\": [
                     {\"name\": [{\"service\": \"a.S\", \"method\": \"M\"}], \"timeout\": \"1.5s\",
                      \"maxRequestMessageBytes\": \"1024\", \"maxResponseMessageBytes\": 2048,
                      \"retryPolicy\": {\"maxAttempts\": 9, \"initialBackoff\": \"0.01s\",
                                        \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2,
                                        \"retryableStatusCodes\": [\"UNAVAILABLE\", 10]}},
                     {\"name\": [{\"service\": \"a.S\"}], \"waitForReady\": true},
                     {\"name\": [{}], \"timeout\": \"0.000000001s\"}],
                    \"retryThrottling\": {\"maxTokens\": 10, \"tokenRatio\": 0.1234}}"))
         (method (clgrpc.grpc::method-config-for config "/a.S/M"))
         (service (clgrpc.grpc::method-config-for config "/a.S/Other"))
         (default (clgrpc.grpc::method-config-for config "/b.T/M"))
         (policy (clgrpc.grpc::method-config-retry-policy method)))
    (is (= 3/2 (clgrpc.grpc::method-config-timeout method)))
    (is (= 1024 (clgrpc.grpc::method-config-max-request-size method)))
    (is (= 2048 (clgrpc.grpc::method-config-max-response-size method)))
    ;; More than five attempts are lowered to five.
    (is (= 5 (clgrpc.grpc::retry-policy-max-attempts policy)))
    (is (= 10000 (clgrpc.grpc::retry-policy-initial-backoff-us policy)))
    (is (equal '(14 10) (clgrpc.grpc::retry-policy-retryable-codes policy)))
    (is (clgrpc.grpc::method-config-wait-for-ready service))
    (is (null (clgrpc.grpc::method-config-retry-policy service)))
    ;; A nanosecond rounds up to a microsecond, never to zero.
    (is (= 1/1000000 (clgrpc.grpc::method-config-timeout default)))
    (is (= 0.123d0 (clgrpc.grpc::retry-throttle-token-ratio (clgrpc.grpc:service-config-throttle config))))
    (is (null (clgrpc.grpc::method-config-for (clgrpc.grpc:parse-service-config "{}") "/a.S/M")))))

(test invalid-service-configs-are-refused-whole-with-their-reason
  (flet ((policy (fields)
           (format nil "{\"methodConfig\": [{\"name\": [{\"service\": \"a.S\"}], \"retryPolicy\": {~A}}]}"
                   fields)))
    (let ((good "\"initialBackoff\": \"0.1s\", \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2, \"retryableStatusCodes\": [\"UNAVAILABLE\"]"))
      (is (null (config-error-reason (policy (format nil "\"maxAttempts\": 2, ~A" good)))))
      (loop for (fields expected)
              in `((,(format nil "\"maxAttempts\": 1, ~A" good) "maxAttempts")
                   ("\"maxAttempts\": 2, \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2, \"retryableStatusCodes\": [\"UNAVAILABLE\"]"
                    "initialBackoff")
                   ("\"maxAttempts\": 2, \"initialBackoff\": \"0s\", \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2, \"retryableStatusCodes\": [14]"
                    "initialBackoff must be above zero")
                   ("\"maxAttempts\": 2, \"initialBackoff\": \"1\", \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2, \"retryableStatusCodes\": [14]"
                    "duration")
                   ("\"maxAttempts\": 2, \"initialBackoff\": \"0.1s\", \"maxBackoff\": \"1s\", \"backoffMultiplier\": 0, \"retryableStatusCodes\": [14]"
                    "backoffMultiplier")
                   ("\"maxAttempts\": 2, \"initialBackoff\": \"0.1s\", \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2, \"retryableStatusCodes\": []"
                    "retryableStatusCodes")
                   ("\"maxAttempts\": 2, \"initialBackoff\": \"0.1s\", \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2, \"retryableStatusCodes\": [\"UNAVAILBLE\"]"
                    "not a status code"))
            do (let ((reason (config-error-reason (policy fields))))
                 (is (and reason (search expected reason)) "~A: ~S" fields reason)))))
  (loop for (json expected)
          in '(("{\"methodConfig\": [{\"name\": [{\"service\": \"a.S\"}]}, {\"name\": [{\"service\": \"a.S\"}]}]}"
                "two methodConfig entries")
               ("{\"methodConfig\": [{\"name\": [{\"method\": \"M\"}]}]}" "needs its service")
               ("{\"retryThrottling\": {\"maxTokens\": 0, \"tokenRatio\": 1}}" "maxTokens")
               ("{\"retryThrottling\": {\"maxTokens\": 10}}" "tokenRatio")
               ("{\"methodConfig\": [{\"name\": [{\"service\": \"a.S\"}], \"timeout\": \"-1s\"}]}" "duration")
               ("{\"methodConfig\": [" "JSON")
               ("\"x\"" "object"))
        do (let ((reason (config-error-reason json)))
             (is (and reason (search expected reason)) "~A: ~S" json reason)))
  ;; Null is absent; a hedging policy has its defaults.
  (let* ((config (clgrpc.grpc:parse-service-config
                  "{\"methodConfig\": [{\"name\": [{\"service\": \"a.S\"}], \"timeout\": \"2s\",
                     \"waitForReady\": null, \"hedgingPolicy\": {\"maxAttempts\": 7}}]}"))
         (method (clgrpc.grpc::method-config-for config "/a.S/M"))
         (hedging (clgrpc.grpc::method-config-hedging-policy method)))
    (is (= 2 (clgrpc.grpc::method-config-timeout method)))
    (is (= 5 (clgrpc.grpc::hedging-policy-max-attempts hedging)))
    (is (= 0 (clgrpc.grpc::hedging-policy-delay-us hedging))))
  (is (search "not both" (config-error-reason
                          "{\"methodConfig\": [{\"name\": [{\"service\": \"a.S\"}], \"hedgingPolicy\": {\"maxAttempts\": 2},
                             \"retryPolicy\": {\"maxAttempts\": 2, \"initialBackoff\": \"1s\", \"maxBackoff\": \"1s\",
                             \"backoffMultiplier\": 1, \"retryableStatusCodes\": [14]}}]}")))
  ;; The channel refuses a bad one, before any call.
  (signals clgrpc.grpc:service-config-error
    (clgrpc.grpc:make-channel "127.0.0.1" 1 :service-config "{\"methodConfig\": 1}")))

;;; ------------------------------------------------------------------
;;; Against clgrpc's server

(defun retry-config (&key (attempts 4) (codes "\"UNAVAILABLE\"") throttle)
  (format nil "{\"methodConfig\": [{\"name\": [{\"service\": \"retry.Svc\"}],
                \"retryPolicy\": {\"maxAttempts\": ~D, \"initialBackoff\": \"0.01s\",
                  \"maxBackoff\": \"0.05s\", \"backoffMultiplier\": 2,
                  \"retryableStatusCodes\": [~A]}}]~@[, \"retryThrottling\": ~A~]}"
          attempts codes throttle))

(defvar *attempts* (list 0)
  "In its car: attempts the retry test methods have seen (atomic).")

(defun register-retry-methods (server)
  "retry.Svc: Flaky fails the first N attempts (N, the request's first
octet) with the status of its second octet, and a pushback of a tenth of a
second times its third octet if it has one; Sum adds the request messages
and fails its first attempt after reading them all.  Both observe each
attempt's grpc-previous-rpc-attempts."
  (flet ((previous (call)
           (cdr (assoc "grpc-previous-rpc-attempts" (clgrpc.grpc:call-metadata call) :test #'string=))))
    (clgrpc.grpc:register-method
     server "/retry.Svc/Flaky"
     (lambda (request call)
       (let ((attempt (sb-ext:atomic-incf (car *attempts*))))
         (observe (list :flaky attempt (previous call)))
         (when (and (< attempt (aref request 0)) (> (length request) 2))
           (clgrpc.grpc:call-set-trailer-metadata
            call (list (cons "grpc-retry-pushback-ms" (princ-to-string (* 100 (aref request 2)))))))
         (if (< attempt (aref request 0))
             (error 'clgrpc.grpc:grpc-error :code (aref request 1) :message "not yet")
             (bytes attempt)))))
    (clgrpc.grpc:register-method
     server "/retry.Svc/Sum"
     (lambda (call)
       (let ((sum (loop for m = (clgrpc.grpc:call-recv call) while m sum (aref m 0)))
             (attempt (sb-ext:atomic-incf (car *attempts*))))
         (observe (list :sum attempt (previous call) sum))
         (if (zerop attempt)
             (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+unavailable+ "first attempt fails")
             (bytes sum))))
     :kind :client-streaming)
    (clgrpc.grpc:register-method
     server "/retry.Svc/FailAtOnce"
     ;; Its first attempt fails on its first message; later ones add them all.
     (lambda (call)
       (let ((attempt (sb-ext:atomic-incf (car *attempts*))))
         (when (zerop attempt)
           (clgrpc.grpc:call-recv call)
           (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+unavailable+ "first attempt fails"))
         (bytes (loop for m = (clgrpc.grpc:call-recv call) while m sum (length m)))))
     :kind :client-streaming)))

(defmacro with-retry-server ((channel config &key interceptors) &body body)
  (let ((server (gensym "SERVER")))
    `(let* ((,server (clgrpc.grpc:make-server))
            (,channel (progn (register-retry-methods ,server)
                             (clgrpc.grpc:make-channel "127.0.0.1" (clgrpc.grpc:server-start ,server)
                                                       :service-config ,config
                                                       :interceptors ,interceptors))))
       (setf *observed* nil (car *attempts*) 0)
       (unwind-protect (progn ,@body)
         (clgrpc.grpc:channel-close ,channel)
         (clgrpc.grpc:server-stop ,server :grace 1)))))

(defun flaky (channel failures code &rest args)
  (apply #'clgrpc.grpc:unary-call channel "/retry.Svc/Flaky" (bytes failures code) args))

(defun flaky-attempts ()
  "(attempt grpc-previous-rpc-attempts) of each Flaky attempt, in order."
  (sort (loop for o in *observed* when (eq (first o) :flaky) collect (rest o)) #'< :key #'first))

(test a-retry-policy-tries-unavailable-calls-again-with-their-attempt-count
  (with-retry-server (ch (retry-config))
    (is (equalp (bytes 2) (flaky ch 2 clgrpc.grpc:+unavailable+ :timeout 5)))
    (is (equal '((0 nil) (1 "1") (2 "2")) (flaky-attempts))))
  ;; A status the policy does not name ends the call at once.
  (with-retry-server (ch (retry-config))
    (is (equal "INTERNAL" (first (status-of (lambda () (flaky ch 2 clgrpc.grpc:+internal+ :timeout 5))))))
    (is (equal '((0 nil)) (flaky-attempts))))
  ;; maxAttempts counts the first attempt: three in all, then its status.
  (with-retry-server (ch (retry-config :attempts 3))
    (is (equal '("UNAVAILABLE" "not yet")
               (status-of (lambda () (flaky ch 9 clgrpc.grpc:+unavailable+ :timeout 5)))))
    (is (equal '((0 nil) (1 "1") (2 "2")) (flaky-attempts))))
  ;; Without a service config, no retry.
  (with-retry-server (ch nil)
    (is (equal "UNAVAILABLE" (first (status-of (lambda () (flaky ch 1 clgrpc.grpc:+unavailable+ :timeout 5))))))
    (is (= 1 (length (flaky-attempts))))))

(defun attempt-recorder (log)
  "A channel interceptor that pushes (code sent received) onto (car LOG) as
each attempt ends: its status and its message octets."
  (lambda (info next)
    (clgrpc.grpc:call-info-on-attempt
     info (lambda (call)
            (declare (ignore call))
            (lambda (call code)
              (multiple-value-bind (sent received) (clgrpc.grpc:call-attempt-message-octets call)
                (sb-ext:atomic-push (list code sent received) (car log))))))
    (funcall next)))

(defun closed-port ()
  "A loopback port a server listened on and no longer does."
  (let* ((server (clgrpc.grpc:make-server))
         (port (clgrpc.grpc:server-start server)))
    (clgrpc.grpc:server-stop server :grace 0)
    port))

(test each-attempt-is-seen-with-its-status-and-its-octets
  (let ((log (list nil))
        (registry (clgrpc.telemetry:make-registry)))
    (with-retry-server (ch (retry-config)
                        :interceptors (list (clgrpc.telemetry:client-metrics-interceptor registry)
                                            (attempt-recorder log)))
      ;; Two failures, then an answer of one octet; the request (two
      ;; octets) goes with each attempt.
      (flaky ch 2 clgrpc.grpc:+unavailable+ :timeout 5)
      (is (equal `((,clgrpc.grpc:+unavailable+ 2 0) (,clgrpc.grpc:+unavailable+ 2 0) (,clgrpc.grpc:+ok+ 2 1))
                 (reverse (car log))))
      ;; gRPC's metrics count the same attempts, and one call.
      (flet ((value (name &rest labels)
               (clgrpc.telemetry:metric-value registry name
                                              (list* "retry.Svc/Flaky" (clgrpc.grpc::channel-canonical-target ch) labels))))
        (is (= 3 (value "grpc.client.attempt.started")))
        (is (= 2 (value "grpc.client.attempt.duration" "UNAVAILABLE")))
        (is (= 1 (value "grpc.client.attempt.duration" "OK")))
        (is (= 2 (value "grpc.client.attempt.sent_total_compressed_message_size" "UNAVAILABLE")))
        (is (= 1 (value "grpc.client.call.duration" "OK")))
        (is (zerop (value "grpc.client.call.duration" "UNAVAILABLE"))))
      ;; A client stream's ten messages are sent again whole by the retry.
      (setf (car log) nil (car *attempts*) 0)
      (let ((call (clgrpc.grpc:client-streaming-call ch "/retry.Svc/Sum" :timeout 5)))
        (dotimes (i 10) (clgrpc.grpc:call-send call (bytes (1+ i))))
        (clgrpc.grpc:call-close-and-recv call))
      (is (equal `((,clgrpc.grpc:+unavailable+ 10 0) (,clgrpc.grpc:+ok+ 10 1)) (reverse (car log))))
      ;; A message sent after the first attempt failed goes on the second,
      ;; after what that one sends again.
      (setf (car log) nil (car *attempts*) 0)
      (let ((call (clgrpc.grpc:client-streaming-call ch "/retry.Svc/FailAtOnce" :timeout 5)))
        (clgrpc.grpc:call-send call (bytes 1 2 3))
        (loop repeat 200 until (car log) do (sleep 0.01))
        (clgrpc.grpc:call-send call (bytes 1 2 3 4 5))
        (is (equalp (bytes 8) (clgrpc.grpc:call-close-and-recv call))))
      (is (equal `((,clgrpc.grpc:+unavailable+ 3 0) (,clgrpc.grpc:+ok+ 8 1)) (reverse (car log)))))
    ;; An attempt that reaches no server is one attempt, which sent nothing.
    (setf (car log) nil)
    (let ((ch (clgrpc.grpc:make-channel "127.0.0.1" (closed-port)
                                        :interceptors (list (attempt-recorder log)))))
      (unwind-protect
           (is (equal "UNAVAILABLE" (first (status-of (lambda () (flaky ch 0 0 :timeout 2))))))
        (clgrpc.grpc:channel-close ch))
      (is (equal `((,clgrpc.grpc:+unavailable+ 0 0)) (car log))))))

(test a-retry-never-outlives-the-calls-deadline
  ;; Backoff of up to 10 s between attempts: the deadline (0.3 s) ends the
  ;; call with the last attempt's status, not after the backoff.
  (with-retry-server (ch "{\"methodConfig\": [{\"name\": [{\"service\": \"retry.Svc\"}],
                          \"retryPolicy\": {\"maxAttempts\": 5, \"initialBackoff\": \"10s\",
                          \"maxBackoff\": \"10s\", \"backoffMultiplier\": 1,
                          \"retryableStatusCodes\": [\"UNAVAILABLE\"]}}]}")
    (let ((start (get-internal-real-time))
          (status (status-of (lambda () (flaky ch 9 clgrpc.grpc:+unavailable+ :timeout 0.3)))))
      (is (member (first status) '("UNAVAILABLE" "DEADLINE_EXCEEDED") :test #'string=))
      (is (< (- (get-internal-real-time) start) (* 2 internal-time-units-per-second))))))

(test a-client-stream-is-sent-again-whole-on-a-retry
  (with-retry-server (ch (retry-config))
    (let ((call (clgrpc.grpc:client-streaming-call ch "/retry.Svc/Sum" :timeout 5)))
      (dotimes (i 10) (clgrpc.grpc:call-send call (bytes (1+ i))))
      (is (equalp (bytes 55) (clgrpc.grpc:call-close-and-recv call))))
    (is (equal '((:sum 0 nil 55) (:sum 1 "1" 55))
               (sort (remove :flaky *observed* :key #'first) #'< :key #'second)))))

(test the-retry-throttle-stops-retries-when-half-its-tokens-are-gone
  ;; Ten tokens, every attempt failing: each failure takes one, and retries
  ;; stop once five or fewer are left.
  (with-retry-server (ch (retry-config :attempts 2 :throttle "{\"maxTokens\": 10, \"tokenRatio\": 0.5}"))
    (let ((per-call (loop repeat 5
                          collect (let ((before (length *observed*)))
                                    (status-of (lambda () (flaky ch 99 clgrpc.grpc:+unavailable+ :timeout 5)))
                                    (- (length *observed*) before)))))
      (is (equal '(2 2 1 1 1) per-call)))
    ;; Successes give tokens back at tokenRatio each.
    (let ((throttle (clgrpc.grpc:service-config-throttle
                     (clgrpc.grpc::channel-service-config ch))))
      (is (= 3d0 (clgrpc.grpc:retry-throttle-token-count throttle)))
      (setf (car *attempts*) 0)
      (flaky ch 0 0 :timeout 5)
      (is (= 3.5d0 (clgrpc.grpc:retry-throttle-token-count throttle))))))

(test a-call-that-waits-for-ready-rides-out-a-server-not-yet-there
  (let* ((probe (clgrpc.grpc:make-server))
         (port (clgrpc.grpc:server-start probe)))
    (clgrpc.grpc:server-stop probe :grace 0)
    (let ((channel (clgrpc.grpc:make-channel "127.0.0.1" port))
          (server (clgrpc.grpc:make-server)))
      (register-retry-methods server)
      (unwind-protect
           (progn
             ;; Failing fast is the default.
             (is (equal "UNAVAILABLE" (first (status-of (lambda () (flaky channel 0 0 :timeout 5))))))
             ;; Waiting for ready, the deadline ends it.
             (is (equal "DEADLINE_EXCEEDED"
                        (first (status-of (lambda () (flaky channel 0 0 :timeout 0.5 :wait-for-ready t))))))
             (let ((starter (sb-thread:make-thread
                             (lambda () (sleep 0.3) (clgrpc.grpc:server-start server :port port)))))
               (setf (car *attempts*) 0)
               (is (equalp (bytes 0) (flaky channel 0 0 :timeout 10 :wait-for-ready t)))
               (sb-thread:join-thread starter)))
        (clgrpc.grpc:channel-close channel)
        (clgrpc.grpc:server-stop server :grace 1)))))

(test closing-the-channel-ends-a-call-waiting-to-retry
  ;; The server pushes the retry back 5 s; closing the channel ends the
  ;; call at once, not after the pushback.
  (with-retry-server (ch (retry-config))
    (let* ((start (get-internal-real-time))
           (caller (sb-thread:make-thread
                    (lambda () (status-of (lambda () (clgrpc.grpc:unary-call ch "/retry.Svc/Flaky"
                                                                             (bytes 2 clgrpc.grpc:+unavailable+ 50))))))))
      (sleep 0.3)
      (clgrpc.grpc:channel-close ch)
      (is (equal '("UNAVAILABLE" "channel closed") (sb-thread:join-thread caller)))
      (is (< (- (get-internal-real-time) start) (* 2 internal-time-units-per-second)))
      (is (= 1 (length (flaky-attempts)))))))

(test a-message-cut-off-by-a-retried-attempt-is-sent-by-the-next
  ;; A 200,000-octet message waits for window (64 KiB) when the server ends
  ;; the attempt with UNAVAILABLE: CALL-SEND returns as sent, and the next
  ;; attempt carries it whole.
  (let* ((server (clgrpc.grpc:make-server :initial-window-size 65535 :connection-window-size 65535))
         (channel nil))
    (setf (car *attempts*) 0 *observed* nil)
    (clgrpc.grpc:register-method
     server "/retry.Svc/Total"
     (lambda (call)
       (if (zerop (sb-ext:atomic-incf (car *attempts*)))
           (progn (sleep 0.3) (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+unavailable+ "first attempt fails"))
           (let ((total (loop for m = (clgrpc.grpc:call-recv call) while m sum (length m))))
             (observe (list :total total))
             (bytes (ldb (byte 8 16) total) (ldb (byte 8 8) total) (ldb (byte 8 0) total)))))
     :kind :client-streaming)
    (setf channel (clgrpc.grpc:make-channel "127.0.0.1" (clgrpc.grpc:server-start server)
                                            :service-config (retry-config)))
    (unwind-protect
         (let ((call (clgrpc.grpc:client-streaming-call channel "/retry.Svc/Total" :timeout 10)))
           (is (eq :ok (status-of (lambda () (clgrpc.grpc:call-send call (filled 200000 7))))))
           (is (equalp (bytes 3 13 64) (clgrpc.grpc:call-close-and-recv call))))
      (clgrpc.grpc:channel-close channel)
      (clgrpc.grpc:server-stop server :grace 1))))

;;; ------------------------------------------------------------------
;;; Hedging

(defun hedging-config (&key (attempts 3) (delay "0.05s") (non-fatal "\"UNAVAILABLE\""))
  (format nil "{\"methodConfig\": [{\"name\": [{\"service\": \"hedge.Svc\"}],
                \"hedgingPolicy\": {\"maxAttempts\": ~D, \"hedgingDelay\": ~S,
                  \"nonFatalStatusCodes\": [~A]}}]}"
          attempts delay non-fatal))

(defmacro with-hedge-server ((channel config &key interceptors) &body body)
  "BODY with CHANNEL (service config CONFIG) to a server of hedge.Svc/Slow:
its first attempt waits up to 3 s for the call to be cancelled, or fails
with the status of the request's first octet if it is not 0; later
attempts answer their attempt number at once."
  (let ((server (gensym "SERVER")))
    `(let* ((,server (clgrpc.grpc:make-server))
            (,channel (progn
                        (clgrpc.grpc:register-method
                         ,server "/hedge.Svc/Slow"
                         (lambda (request call)
                           (let ((attempt (sb-ext:atomic-incf (car *attempts*))))
                             (observe (list :hedge attempt
                                            (cdr (assoc "grpc-previous-rpc-attempts" (clgrpc.grpc:call-metadata call)
                                                        :test #'string=))))
                             (cond ((plusp attempt) (bytes attempt))
                                   ((plusp (aref request 0))
                                    (error 'clgrpc.grpc:grpc-error :code (aref request 0) :message "first fails"))
                                   (t (loop repeat 300 until (clgrpc.grpc:call-cancelled-p call) do (sleep 0.01))
                                      (observe (list :first-cancelled (clgrpc.grpc:call-cancelled-p call)))
                                      (bytes 0))))))
                        (clgrpc.grpc:make-channel "127.0.0.1" (clgrpc.grpc:server-start ,server)
                                                  :service-config ,config
                                                  :interceptors ,interceptors))))
       (setf *observed* nil (car *attempts*) 0)
       (unwind-protect (progn ,@body)
         (clgrpc.grpc:channel-close ,channel)
         (clgrpc.grpc:server-stop ,server :grace 1)))))

(defun hedge-attempts ()
  (sort (loop for o in *observed* when (eq (first o) :hedge) collect (rest o)) #'< :key #'first))

(test a-hedge-answers-while-the-first-attempt-is-slow
  (with-hedge-server (ch (hedging-config))
    (let ((start (get-internal-real-time)))
      (is (equalp (bytes 1) (clgrpc.grpc:unary-call ch "/hedge.Svc/Slow" (bytes 0) :timeout 5)))
      (is (< (- (get-internal-real-time) start) (floor internal-time-units-per-second 2))))
    (is (equal '((0 nil) (1 "1")) (hedge-attempts)))
    ;; The slow first attempt was cancelled once the hedge answered.
    (is (wait-observed (lambda (o) (equal o '(:first-cancelled t)))))))

(test each-hedge-is-an-attempt-of-its-own
  (let ((log (list nil)))
    (with-hedge-server (ch (hedging-config) :interceptors (list (attempt-recorder log)))
      (is (equalp (bytes 1) (clgrpc.grpc:unary-call ch "/hedge.Svc/Slow" (bytes 0) :timeout 5)))
      ;; The hedge answered; the slow first attempt was cancelled.
      (is (equal (list clgrpc.grpc:+ok+ clgrpc.grpc:+cancelled+)
                 (sort (mapcar #'first (car log)) #'<))))))

(test a-non-fatal-failure-sends-the-next-hedge-at-once
  (with-hedge-server (ch (hedging-config :delay "10s"))
    (let ((start (get-internal-real-time)))
      (is (equalp (bytes 1) (clgrpc.grpc:unary-call ch "/hedge.Svc/Slow" (bytes clgrpc.grpc:+unavailable+) :timeout 5)))
      (is (< (- (get-internal-real-time) start) (floor internal-time-units-per-second 2))))))

(test a-fatal-failure-ends-a-hedged-call
  (with-hedge-server (ch (hedging-config :delay "10s"))
    (is (equal '("INVALID_ARGUMENT" "first fails")
               (status-of (lambda () (clgrpc.grpc:unary-call ch "/hedge.Svc/Slow" (bytes clgrpc.grpc:+invalid-argument+)
                                                             :timeout 5)))))
    (is (= 1 (length (hedge-attempts))))))

(test no-hedge-goes-while-the-throttle-holds-half-its-tokens-or-fewer
  (with-hedge-server (ch (concatenate 'string (subseq (hedging-config) 0 (1- (length (hedging-config))))
                                      ", \"retryThrottling\": {\"maxTokens\": 10, \"tokenRatio\": 0.1}}"))
    (let ((throttle (clgrpc.grpc:service-config-throttle (clgrpc.grpc::channel-service-config ch))))
      (setf (clgrpc.grpc::retry-throttle-tokens throttle) 5d0)
      ;; The first attempt answers only after 3 s: no hedge overtakes it.
      (is (equalp (bytes 0) (clgrpc.grpc:unary-call ch "/hedge.Svc/Slow" (bytes 0) :timeout 10)))
      (is (= 1 (length (hedge-attempts))))
      ;; Its success gives a tenth of a token back, once.
      (is (= 5.1d0 (clgrpc.grpc:retry-throttle-token-count throttle))))))
