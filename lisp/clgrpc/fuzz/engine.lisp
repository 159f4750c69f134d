;;;; The fuzzing loop of one target: replay the seeds and the recorded
;;;; findings, then mutate corpus entries until time is up, keeping each
;;;; input that set a coverage mark no earlier input had set.

(in-package #:clgrpc.fuzz)

(defstruct (run-state (:conc-name state-))
  target
  run                                   ; the target's input runner
  codes                                 ; its instrumented code objects
  (marks 0 :type fixnum)                ; coverage marks set so far
  (corpus (make-array 64 :adjustable t :fill-pointer 0))
  (outcomes (make-hash-table :test 'equal)) ; rejection signatures seen
  (findings (make-hash-table :test 'equal)) ; signature -> saved path
  (executions 0 :type fixnum)
  (start 0 :type fixnum)
  findings-directory                    ; where findings are written
  save-directory)                       ; where kept inputs are written, or NIL

(defun elapsed-seconds (state)
  (/ (- (get-internal-real-time) (state-start state)) internal-time-units-per-second))

(defun report (state stream label)
  (multiple-value-bind (fc ft bc bt) (coverage-summary (state-codes state))
    (let ((seconds (elapsed-seconds state)))
      (format stream "~&~A ~A: ~D s, ~D execs (~D/s), coverage ~D/~D forms ~D/~D branches, ~
                      corpus ~D, findings ~D~%"
              label (target-name (state-target state)) (round seconds) (state-executions state)
              (round (state-executions state) (max seconds 1/1000)) fc ft bc bt
              (length (state-corpus state)) (hash-table-count (state-findings state)))
      (finish-output stream)
      (list :target (target-name (state-target state)) :seconds (round seconds)
            :executions (state-executions state)
            :per-second (round (state-executions state) (max seconds 1/1000))
            :forms (list fc ft) :branches (list bc bt)
            :corpus (length (state-corpus state))
            :findings (hash-table-count (state-findings state))))))

(defun record-finding (state input condition backtrace)
  "Report a finding the run has not seen yet: minimized, saved, printed."
  (let ((signature (condition-signature condition)))
    (unless (gethash signature (state-findings state))
      (let* ((target (state-target state))
             (small (minimize target (state-run state) input signature))
             (path (and (state-findings-directory state)
                        (save-input (state-findings-directory state) small))))
        (setf (gethash signature (state-findings state)) (or path t))
        (format t "~&== FINDING in ~A: ~A~%~@[== input saved as ~A~%~]== input (~D octets): ~A~%~A~%"
                (target-name target) condition path (length small) (octets-to-hex small)
                (or backtrace ""))
        (finish-output)))))

(defun try-input (state input &key keep)
  "Run INPUT; keep it in the corpus if it reached new coverage (or KEEP)."
  (let ((target (state-target state)))
    (multiple-value-bind (status condition backtrace) (execute target (state-run state) input)
      (incf (state-executions state))
      (when (eq status :finding)
        (record-finding state input condition backtrace)
        (return-from try-input status))
      (let* ((marks (count-marks (state-codes state)))
             (new-marks (> marks (state-marks state)))
             (new-outcome (and (eq status :rejected) (target-outcome-feedback target)
                               (let ((signature (condition-signature condition)))
                                 (unless (gethash signature (state-outcomes state))
                                   (setf (gethash signature (state-outcomes state)) t))))))
        (setf (state-marks state) marks)
        (when (or keep new-marks new-outcome)
          (vector-push-extend input (state-corpus state))
          (when (and (state-save-directory state) (not keep))
            (save-input (state-save-directory state) input))))
      status)))

(defun fuzz-target (target &key (seconds 600) seed-directory regression-directory
                                findings-directory save-directory (report-every 10)
                                uncovered (stream *standard-output*))
  "Fuzz TARGET for SECONDS (0: only replay), starting from the inputs in
SEED-DIRECTORY, REGRESSION-DIRECTORY (earlier findings, which must pass now)
and SAVE-DIRECTORY (a corpus kept by earlier runs, where this run adds what
it keeps).  Findings are written to FINDINGS-DIRECTORY.  With UNCOVERED,
the functions reached but not fully covered are listed at the end.  Returns
a plist of figures, :findings being their count."
  (let* ((codes (coverage-codes (target-paths target)))
         (state (make-run-state :target target :codes codes
                                :run (funcall (target-runner target))
                                :start (get-internal-real-time)
                                :findings-directory findings-directory
                                :save-directory save-directory)))
    (let ((inputs (mapcar #'cdr (append (read-corpus seed-directory)
                                        (read-corpus regression-directory)
                                        (read-corpus save-directory)))))
      ;; Warm up, results ignored: the first calls of a generic function fill
      ;; its dispatch caches, megaoctets that would pass for the input's.
      (dotimes (i 2)
        (dolist (input inputs)
          (execute target (state-run state) input)))
      (reset-marks)
      (setf (state-marks state) (count-marks codes))
      (dolist (input inputs)
        (try-input state input :keep t)))
    (when (zerop (length (state-corpus state)))
      (vector-push-extend (make-octets 0) (state-corpus state)))
    (report state stream "replayed")
    (let ((end (+ (state-start state) (* seconds internal-time-units-per-second)))
          (next-report (+ (get-internal-real-time) (* report-every internal-time-units-per-second)))
          (corpus (state-corpus state))
          (max-length (target-max-length target))
          (tokens (target-tokens target)))
      (loop while (< (get-internal-real-time) end)
            do (dotimes (i 100)
                 (try-input state (mutate (pick corpus) corpus max-length tokens)))
               (when (> (get-internal-real-time) next-report)
                 (incf next-report (* report-every internal-time-units-per-second))
                 (report state stream "fuzzing"))))
    (prog1 (report state stream "done")
      (when uncovered
        (print-uncovered codes stream)))))
