;;;; A system whose first file depends on a later one, for asdf_order_test: the check refuses it.
(defsystem "later"
  :components ((:file "first" :depends-on ("second"))
               (:file "second")))
