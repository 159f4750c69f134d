;;;; The entry point of lisp_test executables: runs the FiveAM suites named in LISP_TEST_SUITES,
;;;; prints FiveAM's report, writes a JUnit XML report to XML_OUTPUT_FILE (Bazel shows it in the
;;;; test summary and result UIs), and exits 1 when anything failed.

(defpackage #:bazel.fiveam
  (:use #:common-lisp)
  (:export #:main))

(in-package #:bazel.fiveam)

(defun split-spaces (string)
  (loop for start = (position #\Space string :test-not #'char=)
          then (position #\Space string :start end :test-not #'char=)
        for end = (and start (or (position #\Space string :start start) (length string)))
        while start
        collect (subseq string start end)))

(defun find-suite (name)
  (let ((symbol (let ((*package* (find-package "CL-USER")))
                  (handler-case (read-from-string name)
                    (error () nil)))))
    (and symbol (symbolp symbol) (fiveam:get-test symbol) symbol)))

(defun xml-escape (string)
  (with-output-to-string (out)
    (loop for c across string
          do (case c
               (#\< (write-string "&lt;" out))
               (#\> (write-string "&gt;" out))
               (#\& (write-string "&amp;" out))
               (#\" (write-string "&quot;" out))
               (t (if (or (char= c #\Newline) (char= c #\Tab) (>= (char-code c) 32))
                      (write-char c out)
                      (write-char #\? out)))))))

(defun result-name (result)
  (let ((test (ignore-errors (fiveam::test-case result))))
    (if test (string-downcase (princ-to-string (fiveam::name test))) "unknown")))

(defun result-reason (result)
  (or (ignore-errors (princ-to-string (fiveam::reason result))) ""))

(defun write-junit (path suite-results)
  "SUITE-RESULTS: list of (suite-name . results)."
  (with-open-file (out path :direction :output :if-exists :supersede :external-format :utf-8)
    (format out "<?xml version=\"1.0\" encoding=\"UTF-8\"?>~%<testsuites>~%")
    (loop for (suite . results) in suite-results
          do (format out "  <testsuite name=\"~A\" tests=\"~D\" failures=\"~D\" skipped=\"~D\">~%"
                     (xml-escape suite) (length results)
                     (count-if (lambda (r) (typep r 'fiveam::test-failure)) results)
                     (count-if (lambda (r) (typep r 'fiveam::test-skipped)) results))
             (dolist (r results)
               (format out "    <testcase classname=\"~A\" name=\"~A\">"
                       (xml-escape suite) (xml-escape (result-name r)))
               (typecase r
                 (fiveam::test-failure
                  (format out "<failure message=\"~A\"/>" (xml-escape (result-reason r))))
                 (fiveam::test-skipped (format out "<skipped/>")))
               (format out "</testcase>~%"))
             (format out "  </testsuite>~%"))
    (format out "</testsuites>~%")))

(defun main ()
  (let* ((names (split-spaces (or (sb-ext:posix-getenv "LISP_TEST_SUITES") "")))
         (fiveam:*on-error* nil)
         (fiveam:*on-failure* nil)
         (ok t)
         (suite-results '()))
    (when (null names)
      (format *error-output* "LISP_TEST_SUITES names no suite~%")
      (return-from main 2))
    (dolist (name names)
      (let ((suite (find-suite name)))
        (cond ((null suite)
               (format *error-output* "no FiveAM suite ~A~%" name)
               (setf ok nil)
               (push (cons name '()) suite-results))
              (t
               (let ((results (fiveam:run suite)))
                 (fiveam:explain! results)
                 (when (or (null results)
                           (some (lambda (r) (typep r 'fiveam::test-failure)) results))
                   (setf ok nil))
                 (push (cons name results) suite-results))))))
    (let ((xml (sb-ext:posix-getenv "XML_OUTPUT_FILE")))
      (when (and xml (plusp (length xml)))
        (write-junit xml (nreverse suite-results))))
    (finish-output)
    (if ok 0 1)))
