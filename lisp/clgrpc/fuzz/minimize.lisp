;;;; Shrinking a finding's input before it is saved and shown: drop chunks
;;;; (halves, quarters, ... single octets) as long as the same finding, by
;;;; signature, still happens.  Bounded in time: a finding is kept whole
;;;; rather than minimized at length.

(in-package #:clgrpc.fuzz)

(defun same-finding-p (target run input signature)
  (multiple-value-bind (status condition) (execute target run input)
    (and (eq status :finding) (string= (condition-signature condition) signature))))

(defun minimize (target run input signature &key (seconds 5))
  (let ((end (+ (get-internal-real-time) (* seconds internal-time-units-per-second)))
        (best input))
    (loop for chunk = (max 1 (floor (length best) 2)) then (max 1 (floor chunk 2))
          do (let ((start 0))
               (loop while (and (< start (length best)) (< (get-internal-real-time) end))
                     do (let ((candidate (concatenate 'octets (subseq best 0 start)
                                                      (subseq best (min (length best) (+ start chunk))))))
                          (if (same-finding-p target run candidate signature)
                              (setf best candidate)
                              (incf start chunk)))))
          until (or (= chunk 1) (>= (get-internal-real-time) end)))
    best))
