;;;; The command-line parser of the Lisp programs; the system matches the
;;;; lisp_library //lisp/cmdline.

(defsystem "cmdline"
  :description "Command lines parsed the way Go's flag package parses them."
  :license "Apache-2.0"
  :serial t
  :components ((:file "package")
               (:file "flags")))
