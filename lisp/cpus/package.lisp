;;;; The package of the CPU-affinity helpers that the Lisp programs share.

(defpackage #:cpus
  (:use #:cl)
  (:documentation "CPU affinity of threads and processes, and kernel CPU lists.")
  (:export #:usable-cpus #:set-thread-cpus #:pin-process #:parse-cpu-list #:format-cpu-list))
