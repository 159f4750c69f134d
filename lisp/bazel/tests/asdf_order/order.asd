;;;; A system of two files, for asdf_order_test.
(defsystem "order"
  :serial t
  :components ((:file "first")
               (:module "sub" :components ((:file "second")))
               (:static-file "data.txt")))
