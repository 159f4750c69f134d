;;;; The command line:
;;;;
;;;;   clgrpc-fuzz [--seconds N] [--seed N] [--corpus DIR] [--regressions DIR]
;;;;               [--findings DIR] [--save-corpus DIR] [--sources DIR] [--chipz DIR]
;;;;               [--uncovered] [--write-seeds] [TARGET...]
;;;;
;;;; Fuzzes each TARGET (default: all) for N seconds ($FUZZ_SECONDS, else
;;;; 600), one after the other.  Directories are roots holding one directory
;;;; per target: --corpus the checked-in seeds, --regressions earlier
;;;; findings (replayed first; each must pass), --findings where new ones
;;;; are written, --save-corpus a corpus kept across runs.  --sources is the
;;;; directory of clgrpc.asd and --chipz that of chipz's sources, whose files
;;;; are compiled with coverage marks.  --uncovered lists, after each target,
;;;; the functions it reached but did not cover entirely.  Exits 1 if there
;;;; was a finding.

(in-package #:clgrpc.fuzz)

(defun parse-arguments (arguments)
  "(values keyword-arguments targets) for FUZZ, from the command line."
  (let ((keys '()) (targets '()))
    (loop while arguments
          do (let ((arg (pop arguments)))
               (cond ((member arg '("--write-seeds" "--uncovered") :test #'string=)
                      (setf (getf keys (intern (string-upcase (subseq arg 2)) :keyword)) t))
                     ((and (> (length arg) 2) (string= "--" arg :end2 2))
                      (let ((key (intern (string-upcase (subseq arg 2)) :keyword)))
                        (unless (member key '(:seconds :seed :corpus :regressions :findings
                                              :save-corpus :sources :chipz))
                          (error "unknown option ~A" arg))
                        (unless arguments
                          (error "~A needs a value" arg))
                        (let ((value (pop arguments)))
                          (setf (getf keys key)
                                (if (member key '(:seconds :seed)) (parse-integer value) value)))))
                     (t (push arg targets)))))
    (values keys (nreverse targets))))

(defun default-sources ()
  "Where ASDF found clgrpc and chipz, when it is loaded."
  (let ((asdf (find-package "ASDF")))
    (when asdf
      (flet ((dir (system)
               (ignore-errors (namestring (funcall (find-symbol "SYSTEM-SOURCE-DIRECTORY" asdf) system)))))
        (remove nil (list (let ((d (dir "clgrpc"))) (and d (cons :clgrpc d)))
                          (let ((d (dir "chipz"))) (and d (cons :chipz d)))))))))

(defun fuzz (target-names &key seconds seed corpus regressions findings save-corpus sources chipz
                               uncovered write-seeds)
  "Fuzz the targets named (all for ()) as the command line says, the
options being its own; SECONDS defaults to $FUZZ_SECONDS, else 600, and the
directories to those of clgrpc's sources.  Returns the exit status: 1 if
there was a finding."
  (let* ((*sources* (append (and sources (list (cons :clgrpc sources)))
                            (and chipz (list (cons :chipz chipz)))
                            (default-sources)))
         (clgrpc (cdr (assoc :clgrpc *sources*)))
         (corpus (or corpus (and clgrpc (merge-pathnames "fuzz/corpus/" (as-directory clgrpc)))))
         (regressions (or regressions
                          (and clgrpc (merge-pathnames "fuzz/crashes/" (as-directory clgrpc)))))
         (findings (or findings regressions))
         (targets (mapcar #'find-target (or target-names (target-names)))))
    (if write-seeds
        (dolist (target targets 0)
          (format t "~&~A: ~D seeds written~%" (target-name target) (write-seeds target corpus)))
        (let* ((seconds (or seconds (parse-integer (or (sb-ext:posix-getenv "FUZZ_SECONDS") "600"))))
               (seed (or seed (ldb (byte 31 0) (+ (get-universal-time) (get-internal-real-time)))))
               (*random* (sb-ext:seed-random-state seed))
               (found 0))
          (format t "~&== fuzzing ~{~A~^, ~} for ~D s each, random seed ~D~%"
                  (mapcar #'target-name targets) seconds seed)
          (dolist (target targets)
            (incf found (getf (fuzz-target target
                                           :seconds seconds
                                           :seed-directory (target-directory corpus target)
                                           :regression-directory (target-directory regressions target)
                                           :findings-directory (target-directory findings target)
                                           :save-directory (target-directory save-corpus target)
                                           :uncovered uncovered)
                              :findings)))
          (if (zerop found) 0 1)))))

(defun main ()
  "The executable's entry point: the exit status."
  (handler-case
      (multiple-value-bind (keys targets) (parse-arguments (rest sb-ext:*posix-argv*))
        (apply #'fuzz targets keys))
    (error (e)
      (format *error-output* "~&clgrpc-fuzz: ~A~%" e)
      2)))
