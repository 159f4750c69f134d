;;;; Entry points for running the suite from ASDF, CI or the REPL.

(in-package #:clgrpc.tests)

(defun run-tests ()
  "Run every test; print the summary and a 'N passed, N failed' line.
Returns true when nothing failed."
  (let* ((results (run :clgrpc))
         (passed (count-if (lambda (r) (typep r 'it.bese.fiveam::test-passed)) results))
         (failed (count-if (lambda (r) (typep r 'it.bese.fiveam::test-failure)) results))
         (skipped (count-if (lambda (r) (typep r 'it.bese.fiveam::test-skipped)) results)))
    (explain! results)
    (format t "~&~D passed, ~D failed~@[, ~D skipped~]~%" passed failed
            (and (plusp skipped) skipped))
    (finish-output)
    (zerop failed)))

(defun run-tests-or-fail ()
  "For ASDF's test-op: signal an error when any test failed, so a
non-interactive SBCL exits with a non-zero status."
  (unless (run-tests)
    (error "clgrpc tests failed")))

(defun run-tests-and-exit ()
  "For scripts: run the suite and exit the process, status 0 or 1."
  (uiop:quit (if (run-tests) 0 1)))
