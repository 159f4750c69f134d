;;;; clgrpc's getting-started example: a Greeter service, its server and
;;;; its client, loaded by ASDF from a plain SBCL (README.md).

(defsystem "greeter"
  :description "A gRPC Greeter service, server and client on clgrpc."
  :license "Apache-2.0"
  :depends-on ("clgrpc")
  :serial t
  :pathname "src/"
  :components ((:static-file "../greeter.pb")
               (:file "proto")
               (:file "server")
               (:file "client"))
  :in-order-to ((test-op (test-op "greeter/tests"))))

(defsystem "greeter/tests"
  :description "The Greeter example's tests: its server and client over loopback."
  :license "Apache-2.0"
  :depends-on ("greeter" "fiveam")
  :pathname "tests/"
  :components ((:file "greeter-tests"))
  :perform (test-op (o c) (uiop:symbol-call '#:greeter.tests '#:run-tests-or-fail)))
