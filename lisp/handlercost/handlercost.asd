;;;; The handler-cost service and server on clgrpc (bench/handlercost), each a
;;;; system of its own, matching the Bazel targets of BUILD.bazel:
;;;; "handlercost" is the lisp_library :handlercost (the handlers),
;;;; "handlercost/server" :server_lib (the program).

(defsystem "handlercost"
  :description "The handler-cost service on clgrpc: Fast, Sleep and Spin, raw octets."
  :license "Apache-2.0"
  :depends-on ("clgrpc")
  :pathname "src/"
  :components ((:file "service")))

(defsystem "handlercost/server"
  :description "The handler-cost server program, with go/handlercost/server's command line."
  :license "Apache-2.0"
  :depends-on ("clgrpc" "cmdline" "handlercost")
  :pathname "src/"
  :components ((:file "server")))
