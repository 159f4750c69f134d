;;;; A system of two files, for asdf_order_test (data.txt, a static file, is left out of the
;;;; check and need not exist).
(defsystem "order"
  :serial t
  :components ((:file "first")
               (:module "sub" :components ((:file "second")))
               (:static-file "data.txt")))
