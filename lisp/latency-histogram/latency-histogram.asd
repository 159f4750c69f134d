;;;; gRPC's log-bucket latency histogram; the system matches the lisp_library
;;;; //lisp/latency-histogram.

(defsystem "latency-histogram"
  :description "gRPC's log-bucket latency histogram, binned as grpc.testing.HistogramData is."
  :license "Apache-2.0"
  :serial t
  :components ((:file "package")
               (:file "log-buckets")))
