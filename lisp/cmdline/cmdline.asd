;;;; The command-line parser of the Lisp programs; the system matches the
;;;; lisp_library //lisp/cmdline.

(defsystem "cmdline"
  :description "Command lines parsed the way Go's flag package parses them."
  :license "Apache-2.0"
  :serial t
  :components ((:file "package")
               (:file "flags")))

(defsystem "cmdline/tls"
  :description "TLS command-line flags and the clgrpc TLS contexts they describe."
  :license "Apache-2.0"
  :depends-on ("cmdline" "clgrpc")
  :components ((:file "tls-flags")))
