;;;; Coverage feedback from sb-cover.
;;;;
;;;; A target's source files are compiled again, at run time, with
;;;; SB-COVER:STORE-COVERAGE-DATA and loaded over the uninstrumented
;;;; definitions: the Bazel build stays as it is, and only the decoder under
;;;; test pays for the marks.  Each instrumented code object carries one mark
;;;; octet per form or branch (its coverage map); marks only ever go from 0 to
;;;; set, so an input reached new coverage exactly when the count of set marks
;;;; grew.  Counting them is a pass over a few thousand octets, cheap next to
;;;; one execution.
;;;;
;;;; CODE-COVERAGE-MARKS and %FIND-COVERAGE-MAP are sb-cover internals (SBCL
;;;; 2.2): they are used here and nowhere else.

(in-package #:clgrpc.fuzz)

(defvar *instrumented* (make-hash-table :test 'equal)
  "Source namestring -> the vector of its instrumented code objects.")

(defun fasl-directory ()
  "Where instrumented fasls go, each for the moment it takes to load it."
  (let ((dir (format nil "~A/clgrpc-fuzz/"
                     (string-right-trim "/" (or (sb-ext:posix-getenv "TEST_TMPDIR")
                                                (sb-ext:posix-getenv "TMPDIR")
                                                "/tmp")))))
    (ensure-directories-exist dir)
    dir))

(defun code-source (code)
  (let ((info (sb-kernel:%code-debug-info code)))
    (and (typep info 'sb-c::compiled-debug-info)
         (sb-c::debug-source-namestring (sb-c::compiled-debug-info-source info)))))

(defun top-level-form-code-p (code)
  "Code that ran once, at load: its marks never change, so it is left out."
  (let ((name (code-name code)))
    (and (consp name) (eq (car name) 'sb-c::top-level-form))))

(defun instrument (path)
  "Compile the source file PATH with coverage marks and load it, once."
  (let ((key (namestring (truename path))))
    (or (gethash key *instrumented*)
        (let ((fasl (format nil "~A~D-~D-~A.fasl" (fasl-directory) (sb-unix:unix-getpid)
                            (hash-table-count *instrumented*) (pathname-name path))))
          (with-compilation-unit (:override t)
            (let ((*compile-verbose* nil) (*compile-print* nil) (*load-verbose* nil)
                  (sb-ext:*evaluator-mode* :compile))
              (proclaim '(optimize sb-cover:store-coverage-data))
              (unwind-protect
                   ;; The file compiled cleanly in the build: what the compiler
                   ;; says again (redefinitions, optimization notes) is noise.
                   (handler-bind ((warning #'muffle-warning)
                                  (sb-ext:compiler-note #'muffle-warning))
                     (multiple-value-bind (output warnings-p failure-p)
                         (compile-file key :output-file fasl)
                       (declare (ignore warnings-p))
                       (when failure-p
                         (error "~A did not compile with coverage marks" key))
                       (load output)
                       ;; Loaded, it is of no further use: runs outside a test's
                       ;; temporary directory would otherwise pile fasls up.
                       (delete-file output)))
                (proclaim '(optimize (sb-cover:store-coverage-data 0))))))
          (setf (gethash key *instrumented*)
                (coerce (loop for wp in (cdr sb-c:*code-coverage-info*)
                              for code = (sb-ext:weak-pointer-value wp)
                              when (and code (equal (code-source code) key)
                                        (not (top-level-form-code-p code)))
                                collect code)
                        'simple-vector))))))

(defun coverage-codes (paths)
  "The instrumented code objects of PATHS, instrumenting them if need be."
  (coerce (loop for path in paths append (coerce (instrument path) 'list)) 'simple-vector))

(defun count-marks (codes)
  "The number of set coverage marks in CODES."
  (declare (type simple-vector codes) (optimize (speed 3) (safety 0)))
  (let ((n 0))
    (declare (type fixnum n))
    (loop for code across codes
          do (sb-sys:with-pinned-objects (code)
               (let ((sap (sb-cover::code-coverage-marks code))
                     (size (length (the simple-vector (sb-cover::%find-coverage-map code)))))
                 (declare (type fixnum size))
                 (dotimes (i size)
                   (unless (zerop (sb-sys:sap-ref-8 sap i))
                     (incf n))))))
    n))

(defun branch-entry-p (entry)
  "A coverage map entry for one way of a conditional, rather than a form."
  (some (lambda (path) (and (consp path) (member (car path) '(:then :else)))) entry))

(defun coverage-summary (codes)
  "(values forms-covered forms-total branches-covered branches-total)."
  (let ((fc 0) (ft 0) (bc 0) (bt 0))
    (loop for code across codes
          do (sb-sys:with-pinned-objects (code)
               (let ((sap (sb-cover::code-coverage-marks code))
                     (map (sb-cover::%find-coverage-map code)))
                 (loop for entry across map
                       for i from 0
                       for set = (/= 0 (sb-sys:sap-ref-8 sap i))
                       do (if (branch-entry-p entry)
                              (progn (incf bt) (when set (incf bc)))
                              (progn (incf ft) (when set (incf fc))))))))
    (values fc ft bc bt)))

(defun code-name (code)
  (sb-c::compiled-debug-info-name (sb-kernel:%code-debug-info code)))

(defun print-uncovered (codes stream)
  "A line per function of CODES that a run reached but did not cover
entirely: where the fuzzer, or its seeds, fall short."
  (loop for code across codes
        do (sb-sys:with-pinned-objects (code)
             (let* ((sap (sb-cover::code-coverage-marks code))
                    (size (length (sb-cover::%find-coverage-map code)))
                    (set (loop for i below size count (/= 0 (sb-sys:sap-ref-8 sap i)))))
               (when (< 0 set size)
                 (format stream "~&  ~D/~D ~A~%" set size (code-name code)))))))

(defun reset-marks ()
  "Clear every mark, so that a target's coverage is its own."
  (sb-cover:reset-coverage))
