;;;; The package of the command-line parser that the Lisp programs share.

(defpackage #:cmdline
  (:use #:cl)
  (:documentation "Command lines read the way Go's flag package reads them, so that a Lisp
program takes exactly the arguments of its Go twin.")
  (:export #:flag-spec #:flag-error #:flag-fail #:help-requested
           #:parse-flags #:call-with-command-line #:print-flag-defaults #:program-name
           #:parse-duration #:format-duration #:split-host-port))
