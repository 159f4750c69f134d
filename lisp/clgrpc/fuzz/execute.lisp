;;;; One execution of a target on one input, and what it means: :OK (the
;;;; decoder took it), :REJECTED (it signalled a documented condition) or
;;;; :FINDING (any other condition, a hang, or an allocation far beyond the
;;;; input's size).

(in-package #:clgrpc.fuzz)

(defparameter *execution-seconds* 2
  "The time bound of one execution: decoders take microseconds, so this is
a hang, not a slow input.")

(define-condition excessive-allocation (error)
  ((octets :initarg :octets :reader excessive-allocation-octets)
   (input-length :initarg :input-length :reader excessive-allocation-input-length)
   (budget :initarg :budget :reader excessive-allocation-budget))
  (:report (lambda (c s)
             (format s "an input of ~D octets allocated ~D octets (budget ~D)"
                     (excessive-allocation-input-length c) (excessive-allocation-octets c)
                     (excessive-allocation-budget c)))))

(defun backtrace-string (condition)
  "The frames from where CONDITION was signalled down to the target's
runner, arguments abbreviated."
  (if (typep condition 'storage-condition)
      ;; Printing frames on an exhausted stack could exhaust it again.
      ""
      (let ((text (with-output-to-string (s)
                    (let ((*print-length* 4) (*print-level* 2))
                      (ignore-errors (sb-debug:print-backtrace :stream s :count 30))))))
        (subseq text 0 (or (search "CLGRPC.FUZZ::EXECUTE" text) (length text))))))

(defun execute (target run input &optional confirming)
  "Run INPUT.  Returns (values status condition backtrace): CONDITION is the
rejection or the finding, BACKTRACE a finding's, taken where it was signalled.
An allocation over budget is confirmed by a second run: the first use of a
generic function or a table allocates once, whatever the input."
  (let ((before (sb-ext:get-bytes-consed))
        (backtrace nil))
    (multiple-value-bind (status condition)
        (handler-case
            (handler-bind ((serious-condition
                             (lambda (c)
                               (unless (expected-condition-p target c)
                                 (setf backtrace (backtrace-string c))))))
              (with-deadline (*execution-seconds*)
                (funcall run input))
              (values :ok nil))
          (serious-condition (c)
            (values (if (expected-condition-p target c) :rejected :finding) c)))
      (let ((consed (- (sb-ext:get-bytes-consed) before))
            (budget (funcall (target-allocation-budget target) (length input))))
        (if (and (not (eq status :finding)) (> consed budget))
            (if confirming
                (values :finding
                        (make-condition 'excessive-allocation :octets consed :budget budget
                                                              :input-length (length input))
                        "")
                (execute target run input t))
            (values status condition backtrace))))))

(defun strip-digits (string)
  (remove-if #'digit-char-p string))

(defun condition-signature (condition)
  "What tells two conditions apart for deduplication and outcome feedback:
the type and the message, numbers left out (they vary with the input)."
  (let ((text (handler-case (princ-to-string condition)
                (error () ""))))
    (format nil "~S: ~A" (type-of condition)
            (strip-digits (subseq text 0 (min 120 (length text)))))))
