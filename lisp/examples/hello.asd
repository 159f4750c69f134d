;;;; The example as an ASDF system, for a plain SBCL REPL:
;;;;   (asdf:load-system "hello") (hello:main)   and   (asdf:test-system "hello")

(defsystem "hello"
  :description "The smallest Lisp program of this repository."
  :components ((:file "hello"))
  :in-order-to ((test-op (test-op "hello/tests"))))

(defsystem "hello/tests"
  :depends-on ("hello" "fiveam")
  :components ((:file "hello_test"))
  :perform (test-op (o c) (uiop:symbol-call '#:fiveam '#:run! (uiop:find-symbol* '#:all '#:hello.tests))))
