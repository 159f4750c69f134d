;;;; The command line:
;;;;
;;;;   clgrpc-fuzz [--seconds N] [--seed N] [--corpus DIR] [--regressions DIR]
;;;;               [--findings DIR] [--save-corpus DIR] [--sources DIR] [--chipz DIR]
;;;;               [--write-seeds] [TARGET...]
;;;;
;;;; Fuzzes each TARGET (default: all) for N seconds ($FUZZ_SECONDS, else
;;;; 600), one after the other.  Directories are roots holding one directory
;;;; per target: --corpus the checked-in seeds, --regressions earlier
;;;; findings (replayed first; each must pass), --findings where new ones
;;;; are written, --save-corpus a corpus kept across runs.  --sources is the
;;;; directory of clgrpc.asd and --chipz that of chipz's sources, whose files
;;;; are compiled with coverage marks.  Exits 1 if there was a finding.

(in-package #:clgrpc.fuzz)

(defun parse-arguments (arguments)
  "(values options targets) from ARGUMENTS; OPTIONS is a plist."
  (let ((options '()) (targets '()))
    (loop while arguments
          do (let ((arg (pop arguments)))
               (cond ((string= arg "--write-seeds") (setf (getf options :write-seeds) t))
                     ((and (> (length arg) 2) (string= "--" arg :end2 2))
                      (let ((key (intern (string-upcase (subseq arg 2)) :keyword)))
                        (unless (member key '(:seconds :seed :corpus :regressions :findings
                                              :save-corpus :sources :chipz))
                          (error "unknown option ~A" arg))
                        (unless arguments
                          (error "~A needs a value" arg))
                        (setf (getf options key) (pop arguments))))
                     (t (push arg targets)))))
    (values options (nreverse targets))))

(defun default-sources ()
  "Where ASDF found clgrpc and chipz, when it is loaded."
  (let ((asdf (find-package "ASDF")))
    (when asdf
      (flet ((dir (system)
               (ignore-errors (namestring (funcall (find-symbol "SYSTEM-SOURCE-DIRECTORY" asdf) system)))))
        (remove nil (list (let ((d (dir "clgrpc"))) (and d (cons :clgrpc d)))
                          (let ((d (dir "chipz"))) (and d (cons :chipz d)))))))))

(defun fuzz (options target-names)
  (let* ((*sources* (append (remove nil (list (let ((d (getf options :sources))) (and d (cons :clgrpc d)))
                                              (let ((d (getf options :chipz))) (and d (cons :chipz d)))))
                            (default-sources)))
         (clgrpc (cdr (assoc :clgrpc *sources*)))
         (in-clgrpc (lambda (relative) (and clgrpc (namestring (merge-pathnames relative (uiop-style-directory clgrpc))))))
         (corpus (or (getf options :corpus) (funcall in-clgrpc "fuzz/corpus/")))
         (regressions (or (getf options :regressions) (funcall in-clgrpc "fuzz/crashes/")))
         (findings (or (getf options :findings) regressions))
         (targets (mapcar #'find-target (or target-names (target-names)))))
    (if (getf options :write-seeds)
        (dolist (target targets 0)
          (format t "~&~A: ~D seeds written~%" (target-name target) (write-seeds target corpus)))
        (let* ((seconds (parse-integer (or (getf options :seconds) (sb-ext:posix-getenv "FUZZ_SECONDS")
                                           "600")))
               (seed (if (getf options :seed)
                         (parse-integer (getf options :seed))
                         (ldb (byte 31 0) (+ (get-universal-time) (get-internal-real-time)))))
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
                                           :save-directory (target-directory (getf options :save-corpus) target))
                              :findings)))
          (if (zerop found) 0 1)))))

(defun main ()
  "The executable's entry point: the exit status."
  (handler-case
      (multiple-value-bind (options targets) (parse-arguments (rest sb-ext:*posix-argv*))
        (fuzz options targets))
    (error (e)
      (format *error-output* "~&clgrpc-fuzz: ~A~%" e)
      2)))
