;;;; gRPC's service config (doc/service_config.md), as a channel is given it
;;;; in JSON: per-method timeouts, wait-for-ready, message size limits and
;;;; the retry policy of gRFC A6, the channel's retry throttling, and its
;;;; load balancing policy (loadBalancingConfig, the first of its entries
;;;; that clgrpc has: pick_first, with shuffleAddressList, or round_robin;
;;;; or the older loadBalancingPolicy name).
;;;;
;;;; It is checked as grpc-go checks it: a config that breaks a rule is
;;;; refused whole (SERVICE-CONFIG-ERROR, saying which rule), never applied
;;;; in part.  Retry policies allow at most five attempts, larger values
;;;; being lowered to five, as A6 specifies, and so do hedging policies
;;;; (hedging.lisp).  JSON null stands for an absent field.

(in-package #:clgrpc.grpc)

(define-condition service-config-error (error)
  ((reason :initarg :reason :reader service-config-error-reason))
  (:report (lambda (c s) (format s "invalid service config: ~A" (service-config-error-reason c)))))

(defun %config-fail (format-control &rest args)
  (error 'service-config-error :reason (apply #'format nil format-control args)))

(defconstant +max-retry-attempts+ 5
  "A6: more attempts than this are lowered to it.")

(defstruct (retry-policy (:constructor %make-retry-policy))
  (max-attempts 2 :type (integer 2 5))
  (initial-backoff-us 0 :type (integer 1))
  (max-backoff-us 0 :type (integer 1))
  (backoff-multiplier 1d0 :type double-float)
  (retryable-codes '() :type list))

(defstruct (hedging-policy (:constructor %make-hedging-policy))
  (max-attempts 2 :type (integer 2 5))
  (delay-us 0 :type (integer 0))
  (non-fatal-codes '() :type list))

(defstruct (method-config (:constructor %make-method-config))
  (timeout nil :type (or null real))    ; seconds
  (wait-for-ready nil)
  (max-request-size nil :type (or null (integer 0)))
  (max-response-size nil :type (or null (integer 0)))
  (retry-policy nil :type (or null retry-policy))
  (hedging-policy nil :type (or null hedging-policy)))

(defstruct (retry-throttle (:constructor %make-retry-throttle (max-tokens token-ratio
                                                              &aux (tokens (float max-tokens 1d0)))))
  ;; A6: each failed attempt takes a token, each success gives back
  ;; TOKEN-RATIO of one; retries stop while at most half are left.
  (max-tokens 0 :type (integer 1 1000))
  (token-ratio 0d0 :type double-float)
  (tokens 0d0 :type double-float)
  (lock (sb-thread:make-mutex :name "retry throttle") :type sb-thread:mutex))

(defstruct (service-config (:constructor %make-service-config))
  ;; "/service/method", "/service/" and "" (the default) to a method-config.
  (methods (make-hash-table :test 'equal) :type hash-table)
  (throttle nil :type (or null retry-throttle))
  ;; :PICK-FIRST or :ROUND-ROBIN, or NIL when the config names none.
  (lb-policy nil :type (member nil :pick-first :round-robin))
  ;; pick_first's shuffleAddressList.
  (lb-shuffle nil))

;;; ------------------------------------------------------------------
;;; JSON values

(defun %field (object key)
  "OBJECT's KEY; JSON null is absent, as protobuf's JSON mapping has it."
  (let ((value (cdr (assoc key object :test #'string=))))
    (and (not (eq value :null)) value)))

(defun %object-p (value)
  ;; The JSON reader gives an empty object as NIL.
  (and (listp value) (every (lambda (e) (and (consp e) (stringp (car e)))) value)))

(defun %check-object (value what)
  (unless (%object-p value)
    (%config-fail "~A must be an object" what))
  value)

(defun parse-config-duration (value what)
  "Microseconds of a protobuf JSON Duration (\"1.5s\"), rounded up."
  (unless (and (stringp value) (> (length value) 1)
               (char= (char value (1- (length value))) #\s))
    (%config-fail "~A must be a duration such as \"1.5s\", not ~S" what value))
  (let* ((text (subseq value 0 (1- (length value))))
         (dot (position #\. text))
         (whole (subseq text 0 dot))
         (fraction (if dot (subseq text (1+ dot)) "")))
    (unless (and (plusp (length whole)) (every #'digit-char-p whole)
                 (every #'digit-char-p fraction) (<= (length fraction) 9)
                 (or (null dot) (plusp (length fraction))))
      (%config-fail "~A must be a duration such as \"1.5s\", not ~S" what value))
    (+ (* (parse-integer whole) 1000000)
       (if (plusp (length fraction))
           (ceiling (* (parse-integer fraction) 1000000) (expt 10 (length fraction)))
           0))))

(defun %positive-duration (object key what)
  (let ((value (%field object key)))
    (unless value
      (%config-fail "~A needs ~A" what key))
    (let ((us (parse-config-duration value (format nil "~A's ~A" what key))))
      (unless (plusp us)
        (%config-fail "~A's ~A must be above zero" what key))
      us)))

(defun %octet-count (value what)
  "An int64 of protobuf JSON: a number or a string of digits."
  (cond ((null value) nil)
        ((and (integerp value) (>= value 0)) value)
        ((and (stringp value) (plusp (length value)) (every #'digit-char-p value))
         (parse-integer value))
        (t (%config-fail "~A must be a count of octets, not ~S" what value))))

(defun status-code-from-config (value)
  "A status code named as the service config may name it: \"UNAVAILABLE\"
or 14."
  (cond ((and (integerp value) (<= 0 value 16)) value)
        ((and (stringp value) (position value *status-names* :test #'string=)))
        (t (%config-fail "~S is not a status code" value))))

;;; ------------------------------------------------------------------
;;; Parsing

(defun %parse-retry-policy (object)
  (%check-object object "retryPolicy")
  (let ((attempts (%field object "maxAttempts"))
        (multiplier (%field object "backoffMultiplier"))
        (codes (%field object "retryableStatusCodes")))
    (unless (and (integerp attempts) (> attempts 1))
      (%config-fail "retryPolicy's maxAttempts must be an integer above 1, not ~S" attempts))
    (unless (and (realp multiplier) (plusp multiplier))
      (%config-fail "retryPolicy's backoffMultiplier must be a number above zero, not ~S" multiplier))
    (unless (and (consp codes) (every (lambda (c) (or (stringp c) (integerp c))) codes))
      (%config-fail "retryPolicy's retryableStatusCodes must be a list of status codes, not empty"))
    (let ((codes (remove-duplicates (mapcar #'status-code-from-config codes))))
      (when (member +ok+ codes)
        (%config-fail "retryPolicy's retryableStatusCodes cannot name OK"))
      (%make-retry-policy :max-attempts (min attempts +max-retry-attempts+)
                          :initial-backoff-us (%positive-duration object "initialBackoff" "retryPolicy")
                          :max-backoff-us (%positive-duration object "maxBackoff" "retryPolicy")
                          :backoff-multiplier (float multiplier 1d0)
                          :retryable-codes codes))))

(defun %parse-hedging-policy (object)
  (%check-object object "hedgingPolicy")
  (let ((attempts (%field object "maxAttempts"))
        (delay (%field object "hedgingDelay"))
        (codes (or (%field object "nonFatalStatusCodes") '())))
    (unless (and (integerp attempts) (> attempts 1))
      (%config-fail "hedgingPolicy's maxAttempts must be an integer above 1, not ~S" attempts))
    (unless (and (listp codes) (every (lambda (c) (or (stringp c) (integerp c))) codes))
      (%config-fail "hedgingPolicy's nonFatalStatusCodes must be a list of status codes"))
    (%make-hedging-policy :max-attempts (min attempts +max-retry-attempts+)
                          :delay-us (if delay (parse-config-duration delay "hedgingDelay") 0)
                          :non-fatal-codes (remove-duplicates (mapcar #'status-code-from-config codes)))))

(defun %parse-method-config (object)
  (%check-object object "a methodConfig entry")
  (when (and (%field object "retryPolicy") (%field object "hedgingPolicy"))
    (%config-fail "a methodConfig has a retryPolicy or a hedgingPolicy, not both"))
  (let ((timeout (%field object "timeout"))
        (wait (%field object "waitForReady")))
    (unless (member wait '(nil t :false))
      (%config-fail "waitForReady must be true or false, not ~S" wait))
    (%make-method-config
     :timeout (and timeout (/ (parse-config-duration timeout "timeout") 1000000))
     :wait-for-ready (eq wait t)
     :max-request-size (%octet-count (%field object "maxRequestMessageBytes") "maxRequestMessageBytes")
     :max-response-size (%octet-count (%field object "maxResponseMessageBytes") "maxResponseMessageBytes")
     :retry-policy (let ((policy (%field object "retryPolicy")))
                     (and policy (%parse-retry-policy policy)))
     :hedging-policy (let ((policy (%field object "hedgingPolicy")))
                       (and policy (%parse-hedging-policy policy))))))

(defun %method-config-key (name)
  "The lookup key of one entry of a methodConfig's name list."
  (%check-object name "a methodConfig name")
  (let ((service (or (%field name "service") ""))
        (method (%field name "method")))
    (unless (and (stringp service) (or (null method) (stringp method)))
      (%config-fail "a methodConfig name's service and method must be strings"))
    (cond ((and (string= service "") method (plusp (length method)))
           (%config-fail "a methodConfig name with a method needs its service"))
          ((string= service "") "")
          ((or (null method) (string= method "")) (format nil "/~A/" service))
          (t (format nil "/~A/~A" service method)))))

(defun %parse-throttle (object)
  (%check-object object "retryThrottling")
  (let ((max-tokens (%field object "maxTokens"))
        (ratio (%field object "tokenRatio")))
    (unless (and (integerp max-tokens) (<= 1 max-tokens 1000))
      (%config-fail "retryThrottling's maxTokens must be an integer from 1 to 1000, not ~S" max-tokens))
    (unless (and (realp ratio) (plusp ratio))
      (%config-fail "retryThrottling's tokenRatio must be a number above zero, not ~S" ratio))
    ;; A6: the ratio has at most three decimal places.
    (%make-retry-throttle max-tokens (/ (floor (* ratio 1000)) 1000d0))))

(defun %parse-lb-config (entries)
  "(values policy shuffle) of a loadBalancingConfig list: its first entry
naming a policy clgrpc has, as gRPC takes it; a list naming none is
refused."
  (unless (listp entries)
    (%config-fail "loadBalancingConfig must be a list"))
  (dolist (entry entries)
    (%check-object entry "a loadBalancingConfig entry")
    (unless (= 1 (length entry))
      (%config-fail "a loadBalancingConfig entry names one policy"))
    (let ((name (car (first entry)))
          (config (cdr (first entry))))
      (when (and (member name '("round_robin" "pick_first") :test #'string=)
                 (not (%object-p config)))
        (%config-fail "~A's config must be an object" name))
      (cond ((string= name "round_robin")
             (return-from %parse-lb-config (values :round-robin nil)))
            ((string= name "pick_first")
             (let ((shuffle (%field config "shuffleAddressList")))
               (unless (member shuffle '(nil t :false))
                 (%config-fail "pick_first's shuffleAddressList must be true or false, not ~S" shuffle))
               (return-from %parse-lb-config (values :pick-first (eq shuffle t))))))))
  (when entries
    (%config-fail "loadBalancingConfig names no policy clgrpc has (pick_first, round_robin)")))

(defun parse-service-config (json)
  "A SERVICE-CONFIG from JSON, gRPC's service config text.  Signals
SERVICE-CONFIG-ERROR for anything the config's rules refuse."
  (let ((object (handler-case (parse-json json)
                  (error (e) (%config-fail "~A" e))))
        (config (%make-service-config)))
    (%check-object object "the service config")
    (let ((entries (%field object "methodConfig")))
      (unless (listp entries)
        (%config-fail "methodConfig must be a list"))
      (dolist (entry entries)
        (let ((method-config (%parse-method-config entry))
              (names (%field entry "name")))
          (unless (listp names)
            (%config-fail "a methodConfig's name must be a list"))
          (dolist (name names)
            (let ((key (%method-config-key name)))
              (when (nth-value 1 (gethash key (service-config-methods config)))
                (%config-fail "two methodConfig entries name ~S" (if (string= key "") "the default" key)))
              (setf (gethash key (service-config-methods config)) method-config))))))
    (let ((throttle (%field object "retryThrottling")))
      (when throttle
        (setf (service-config-throttle config) (%parse-throttle throttle))))
    (let ((lb-config (%field object "loadBalancingConfig"))
          (lb-name (%field object "loadBalancingPolicy")))
      (cond (lb-config
             (multiple-value-bind (policy shuffle) (%parse-lb-config lb-config)
               (setf (service-config-lb-policy config) policy
                     (service-config-lb-shuffle config) shuffle)))
            (lb-name
             (unless (stringp lb-name)
               (%config-fail "loadBalancingPolicy must be a string, not ~S" lb-name))
             ;; The older field: a name, matched as gRPC matches it; one
             ;; clgrpc lacks leaves the default.
             (setf (service-config-lb-policy config)
                   (cond ((string-equal lb-name "round_robin") :round-robin)
                         ((string-equal lb-name "pick_first") :pick-first))))))
    config))

(defun method-config-for (config path)
  "The method config that applies to PATH (\"/service/method\"): the
method's own, else its service's, else the default; NIL when none does."
  (and config
       (let ((methods (service-config-methods config)))
         (or (gethash path methods)
             (let ((slash (position #\/ path :from-end t)))
               (and slash (gethash (subseq path 0 (1+ slash)) methods)))
             (gethash "" methods)))))
