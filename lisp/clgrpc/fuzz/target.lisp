;;;; What a fuzz target is: the decoder's entry point, the conditions it is
;;;; documented to signal, the source files whose coverage guides it, and the
;;;; seeds it starts from.

(in-package #:clgrpc.fuzz)

(defvar *sources* '()
  "Where source files to instrument are: an alist of (:clgrpc . directory of
clgrpc.asd) and (:chipz . directory of chipz's sources).")

(defvar *targets* '() "Every target, in definition order.")

(defstruct target
  (name "" :type string)
  ;; (root . relative path) of the files compiled with coverage marks.
  (files '() :type list)
  ;; Called once, before the first input: returns the function that runs one
  ;; input (an octet vector).  A target's state (contexts, message types)
  ;; is made there, not per input.
  (runner nil :type function)
  ;; Condition types the decoder documents for malformed input: a rejection.
  ;; Anything else it signals is a finding.
  (expected '() :type list)
  ;; Returns a list of (name . octets): the seed corpus, made by encoders.
  (seeds nil :type function)
  (max-length 4096 :type fixnum)
  ;; Octet vectors inserted whole by mutation: magic values and headers.
  (tokens '() :type list)
  ;; The most an input of N octets may allocate, in octets: more is a finding.
  (allocation-budget (lambda (n) (+ (* 1024 1024) (* 256 n))) :type function)
  ;; Whether a rejection the corpus has not produced yet (its condition's
  ;; type and message, numbers left out) counts as new coverage: for a
  ;; target whose decoding happens mostly outside instrumented Lisp.
  (outcome-feedback nil))

(defmacro define-target (name &rest keys &key run &allow-other-keys)
  "Define the target NAME (a string) with MAKE-TARGET's KEYS, or RUN, the
input runner of a target without state, instead of :RUNNER."
  `(let ((target (make-target :name ,name
                              ,@(if run
                                    `(:runner (let ((run ,run)) (lambda () run))
                                      ,@(let ((k (copy-list keys))) (remf k :run) k))
                                    keys))))
     (setf *targets* (append (remove ,name *targets* :key #'target-name :test #'string=)
                             (list target)))
     target))

(defun find-target (name)
  (or (find name *targets* :key #'target-name :test #'string-equal)
      (error "no fuzz target ~S (there are ~{~A~^, ~})" name (target-names))))

(defun target-names () (mapcar #'target-name *targets*))

(defun source-path (root relative)
  (let ((dir (or (cdr (assoc root *sources*))
                 (error "the source directory of ~(~A~) is not known (--sources, --chipz)" root))))
    (merge-pathnames relative (as-directory dir))))

(defun as-directory (dir)
  "DIR as a directory pathname, whether or not it ends in a slash."
  (let ((s (namestring dir)))
    (pathname (if (char= (char s (1- (length s))) #\/) s (concatenate 'string s "/")))))

(defun target-paths (target)
  (loop for (root . relative) in (target-files target)
        collect (source-path root relative)))

(defun expected-condition-p (target condition)
  (some (lambda (type) (typep condition type)) (target-expected target)))
