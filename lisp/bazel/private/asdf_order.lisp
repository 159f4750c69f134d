;;;; Checks that a lisp_library's srcs are the source files of an ASDF system, in the same order.
;;;;
;;;;   sbcl --script asdf_order.lisp OUT ASD SYSTEM PACKAGE-DIR SRC...
;;;;
;;;; The BUILD file and the .asd each list a library's files in load order: Bazel compiles them in
;;;; one SBCL process in that order, and ASDF loads them outside Bazel. This is the validation action
;;;; of lisp_library's `asd` attribute, so the build fails when the two lists disagree. SRC and ASD
;;;; are paths in the action's execroot; PACKAGE-DIR is the directory both are relative to in the
;;;; report. Writes OUT (empty) when the lists agree; otherwise prints both and exits 1.

(require :asdf)

;; Only the .asd given is read: no other system is searched for. (The default source registry also
;; names SBCL_HOME, which Bazel's actions set to a relative path, and ASDF wants it absolute.)
(asdf:initialize-source-registry '(:source-registry :ignore-inherited-configuration))

(defun source-files (component)
  "The cl-source-files under COMPONENT, depth first, in the order the .asd declares them: the load
order when every parent is :serial or lists its children in dependency order, which is checked.
Files for features this Lisp lacks (:if-feature) are left out, as ASDF leaves them out."
  (cond ((let ((feature (asdf::component-if-feature component)))
           (and feature (not (uiop:featurep feature))))
         '())
        ((typep component 'asdf:cl-source-file)
         (list component))
        ((typep component 'asdf:parent-component)
         (let ((seen '()))
           (loop for child in (asdf:component-children component)
                 do (dolist (dependency (asdf:component-sideway-dependencies child))
                      (let ((name (and (or (stringp dependency) (symbolp dependency))
                                       (asdf:coerce-name dependency))))
                        (when (and name
                                   (asdf:find-component component name)
                                   (not (member name seen :test #'equal)))
                          (error "~A depends on ~A, which the .asd lists after it: list the ~
                                  files in load order (or use :serial t)"
                                 (asdf:component-find-path child) name))))
                    (push (asdf:component-name child) seen)
                 append (source-files child))))))

;; Bazel's sandbox links each input to the workspace: resolving links would move some paths out
;; of the sandbox and not others, so every path stays as given, made absolute against the cwd.
(setf uiop:*resolve-symlinks* nil)

(defun absolute (path)
  (merge-pathnames (if (stringp path) (uiop:parse-native-namestring path) path) (uiop:getcwd)))

(defun relative (path directory)
  (uiop:native-namestring
   (enough-namestring (absolute path)
                      (absolute (uiop:ensure-directory-pathname
                                 (if (stringp directory)
                                     (uiop:parse-native-namestring directory)
                                     directory))))))

(defun main (args)
  (destructuring-bind (out asd system package-dir &rest srcs) args
    (asdf:load-asd (absolute asd))
    (let* ((found (asdf:find-system system))
           (asd-dir (asdf:system-source-directory found))
           (declared (mapcar (lambda (c) (relative (asdf:component-pathname c) asd-dir))
                             (source-files found)))
           (built (mapcar (lambda (s) (relative s package-dir)) srcs)))
      (cond ((equal declared built)
             (with-open-file (s out :direction :output :if-exists :supersede))
             0)
            (t
             (let ((at (or (mismatch declared built :test (function equal)) 0)))
               (format *error-output*
                       "~&lisp_library srcs and the ~S system of ~A differ (both are load orders ~
                        and must be the same list). First difference, at file ~D: srcs has ~A, ~
                        ~A has ~A.~%  srcs: ~{~A~^ ~}~%  ~A: ~{~A~^ ~}~%"
                       system (file-namestring asd) (1+ at)
                       (or (nth at built) "nothing") (file-namestring asd)
                       (or (nth at declared) "nothing")
                       built (file-namestring asd) declared))
             1)))))

(sb-ext:exit :code (handler-case (main (rest sb-ext:*posix-argv*))
                     (error (e)
                       (format *error-output* "~&asdf_order: ~A~%" e)
                       2)))
