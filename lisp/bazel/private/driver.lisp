;;;; The driver of the Lisp rules' build actions, run by SBCL as
;;;;
;;;;   sbcl --core ... --load driver.lisp --end-toplevel-options COMMAND ARG...
;;;;
;;;;   compile OUT SRC NAME REQUIRES FASL...   compile SRC to the fasl OUT, after loading FASL...
;;;;   save OUT TOPLEVEL COMPRESS REQUIRES FASL...
;;;;                                          load FASL... and save an executable whose entry
;;;;                                          point is the function TOPLEVEL ("package:name")
;;;;
;;;; REQUIRES is a comma-separated list of SBCL modules (contribs) to require first, or "-".
;;;; Compiler output is kept and shown only when the action fails, so that builds stay quiet.

(defpackage #:bazel.lisp.driver
  (:use #:common-lisp))

(in-package #:bazel.lisp.driver)

(defun fail (format-control &rest args)
  (format *error-output* "~&lisp driver: ~?~%" format-control args)
  (finish-output *error-output*)
  (sb-ext:exit :code 1 :abort t))

(defun require-modules (spec)
  (unless (string= spec "-")
    (loop for start = 0 then (1+ end)
          for end = (position #\, spec :start start)
          for name = (subseq spec start end)
          do (require (intern (string-upcase name) :keyword))
          while end)))

(defun load-fasls (fasls)
  (dolist (fasl fasls)
    (load fasl)))

(defun call-with-captured-output (thunk)
  "Runs THUNK with compiler output captured; prints it only if THUNK signals or returns NIL."
  (let* ((log (make-string-output-stream))
         (ok (let ((*standard-output* log)
                   (*error-output* log))
               (handler-case (funcall thunk)
                 (error (e)
                   (format log "~&~A~%" e)
                   nil)))))
    (unless ok
      (write-string (get-output-stream-string log) *error-output*))
    ok))

;;; SBCL records each source's write date in its fasl, and Bazel's sources have arbitrary ones
;;; (checkout time). Reporting a fixed date while compiling makes fasls depend on content only.
(defun fix-source-write-dates ()
  (sb-ext:without-package-locks
    (sb-int:encapsulate 'file-write-date 'bazel-fixed-date
                        (lambda (function pathspec)
                          (declare (ignore function pathspec))
                          0))))

(defun compile-command (out src name requires fasls)
  (require-modules requires)
  (load-fasls fasls)
  (fix-source-write-dates)
  (unless (call-with-captured-output
           (lambda ()
             ;; The fasl names the source by its workspace path, not the sandbox's.
             (let ((sb-c::*source-namestring* name))
               (multiple-value-bind (fasl warnings-p failure-p)
                   (compile-file src :output-file out :verbose nil :print nil)
                 (declare (ignore warnings-p))
                 (and fasl (not failure-p))))))
    (fail "compiling ~A failed (warnings count as failures)" name)))

(defun resolve-toplevel (designator)
  (let* ((colon (or (position #\: designator)
                    (fail "toplevel ~S is not package:function" designator)))
         (package (string-upcase (subseq designator 0 colon)))
         (name (string-upcase (string-left-trim ":" (subseq designator colon))))
         (symbol (and (find-package package) (find-symbol name package))))
    (unless (and symbol (fboundp symbol))
      (fail "toplevel function ~A is not defined" designator))
    symbol))

(defun save-command (out toplevel compress requires fasls)
  (require-modules requires)
  (load-fasls fasls)
  (let ((entry (resolve-toplevel toplevel))
        (compression (and (string= compress "1")
                          (or (member :sb-core-compression *features*)
                              (fail "this SBCL was built without core compression"))
                          t)))
    ;; The CPU time spent in GC so far would be saved in the image; it differs from run to run.
    (setf sb-ext:*gc-run-time* 0)
    (sb-ext:save-lisp-and-die
     out
     :executable t
     ;; Every argument goes to the program; the runtime parses none of its own.
     :save-runtime-options t
     :compression compression
     :toplevel (lambda ()
                 (sb-ext:disable-debugger)
                 (let ((code (funcall entry)))
                   (sb-ext:exit :code (if (integerp code) code 0)))))))

(defun main (args)
  (let ((command (first args))
        (args (rest args)))
    (cond ((and (equal command "compile") (>= (length args) 4))
           (destructuring-bind (out src name requires &rest fasls) args
             (compile-command out src name requires fasls)))
          ((and (equal command "save") (>= (length args) 4))
           (destructuring-bind (out toplevel compress requires &rest fasls) args
             (save-command out toplevel compress requires fasls)))
          (t (fail "usage: compile OUT SRC NAME REQUIRES FASL... | save OUT TOPLEVEL COMPRESS REQUIRES FASL...")))
    (sb-ext:exit :code 0)))

;; SBCL leaves only the program name and the arguments after --end-toplevel-options here.
(main (rest sb-ext:*posix-argv*))
