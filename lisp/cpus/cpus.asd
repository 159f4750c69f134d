;;;; CPU affinity for the Lisp programs; the system matches the lisp_library
;;;; //lisp/cpus.

(defsystem "cpus"
  :description "CPU affinity of threads and processes (sched_setaffinity), and kernel CPU lists."
  :license "Apache-2.0"
  :serial t
  :components ((:file "package")
               (:file "affinity")))
