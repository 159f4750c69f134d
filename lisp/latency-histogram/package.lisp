;;;; The package of gRPC's log-bucket latency histogram, which the qps worker
;;;; reports to gRPC's drivers and the RouteGuide load generator reports to
;;;; the Go harness.

(defpackage #:latency-histogram
  (:use #:cl)
  (:documentation "gRPC's log-bucket latency histogram (grpc.testing.HistogramData's binning).")
  (:export #:+max-histogram-buckets+ #:histogram-bucket-count
           #:latency-histogram #:make-latency-histogram
           #:latency-histogram-buckets #:latency-histogram-min-seen #:latency-histogram-max-seen
           #:latency-histogram-sum #:latency-histogram-sum-of-squares #:latency-histogram-count
           #:histogram-add #:histogram-merge #:histogram-clear))
