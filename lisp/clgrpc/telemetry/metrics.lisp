;;;; Metrics: counters and histograms with labels, in a registry that a
;;;; Prometheus scrape reads (prometheus.lisp).  Recording takes the
;;;; registry's lock briefly and allocates only for a label set not seen
;;;; before, so it may run where clgrpc's call-on-finish functions run: on
;;;; a reactor, with a connection's lock held.

(defpackage #:clgrpc.telemetry
  (:use #:cl)
  (:documentation "Metrics with gRPC's OpenTelemetry names (gRFC A66) for clgrpc servers and
channels, their Prometheus text exposition and a scrape endpoint, and W3C trace context
propagated through interceptors.")
  (:export
   ;; metrics
   #:registry #:make-registry #:counter-add #:histogram-record #:metric-value
   #:+latency-buckets+ #:+size-buckets+
   ;; gRPC's metrics
   #:server-metrics-observer #:client-metrics-interceptor
   ;; Prometheus
   #:prometheus-text #:serve-metrics #:stop-metrics #:metrics-server-port
   ;; tracing
   #:trace-context #:trace-context-trace-id #:trace-context-span-id #:trace-context-sampled
   #:*trace-context* #:parse-traceparent #:format-traceparent #:new-trace-context
   #:server-tracing-interceptor #:client-tracing-interceptor))

(in-package #:clgrpc.telemetry)

(defparameter +latency-buckets+
  (map 'vector (lambda (x) (/ x 100000))
       '(0 1 5 10 30 60 80 100 200 300 400 500 600 800 1000 1300 1600 2000 2500 3000 4000 5000 6500
         8000 10000 13000 16000 20000 25000 30000 40000 50000 65000 80000 100000 200000 500000 1000000
         2000000 5000000 10000000))
  "gRFC A66's bucket bounds for durations, in seconds, as exact rationals
(0, 1e-05, 5e-05, ..., 100): printed exactly, and compared exactly.")

(defparameter +size-buckets+
  #(0 1024 2048 4096 16384 65536 262144 1048576 4194304 16777216 67108864 268435456 1073741824
    4294967296)
  "gRFC A66's bucket bounds for message sizes, in octets.")

(defstruct (instrument (:constructor make-instrument (name kind unit help buckets)))
  (name "" :type string)                ; gRPC's name: grpc.server.call.duration
  (kind :counter :type (member :counter :histogram))
  (unit "" :type string)                ; s, By, or "" for a count
  (help "" :type string)
  (buckets nil :type (or null simple-vector))
  ;; label values (a list of strings, in LABELS order) -> a series
  (series (make-hash-table :test 'equal) :type hash-table)
  (labels '() :type list))

(defstruct (series (:constructor make-series (buckets)))
  (count 0 :type integer)               ; counter value, or observations
  (sum 0 :type real)
  (buckets buckets :type (or null (simple-array integer (*)))))

(defun %copy-series (series)
  (let ((copy (copy-structure series)))
    (when (series-buckets series)
      (setf (series-buckets copy) (copy-seq (series-buckets series))))
    copy))

(defstruct (registry (:constructor make-registry ()))
  "Instruments by name, and the lock every recording takes."
  (lock (sb-thread:make-mutex :name "metrics registry") :type sb-thread:mutex)
  (instruments (make-hash-table :test 'equal) :type hash-table))

(defun ensure-instrument (registry name kind labels &key (unit "") (help "") buckets)
  "REGISTRY's instrument NAME, made the first time with KIND, LABELS (label
names), UNIT, HELP and BUCKETS (upper bounds, for a histogram)."
  (sb-thread:with-mutex ((registry-lock registry))
    (or (gethash name (registry-instruments registry))
        (let ((instrument (make-instrument name kind unit help (and buckets (coerce buckets 'simple-vector)))))
          (setf (instrument-labels instrument) labels
                (gethash name (registry-instruments registry)) instrument)))))

(defun %series (instrument values)
  "Registry lock held."
  (let ((table (instrument-series instrument)))
    (or (gethash values table)
        (setf (gethash (copy-list values) table)
              (make-series (and (instrument-buckets instrument)
                                (make-array (length (instrument-buckets instrument))
                                            :element-type 'integer :initial-element 0)))))))

(defun counter-add (registry instrument values &optional (n 1))
  "Add N to INSTRUMENT's series for label VALUES."
  (sb-thread:with-mutex ((registry-lock registry))
    (incf (series-count (%series instrument values)) n)))

(defun histogram-record (registry instrument values x)
  "Record X in INSTRUMENT's series for label VALUES: in the first bucket
whose bound is at least X (counts are made cumulative when exposed)."
  (sb-thread:with-mutex ((registry-lock registry))
    (let* ((series (%series instrument values))
           (bounds (instrument-buckets instrument))
           (i (position-if (lambda (bound) (<= x bound)) bounds)))
      (incf (series-count series))
      (incf (series-sum series) x)
      (when i
        (incf (aref (series-buckets series) i))))))

(defun metric-value (registry name values)
  "The count of instrument NAME's series for label VALUES (a counter's
value, or a histogram's observations), or 0."
  (sb-thread:with-mutex ((registry-lock registry))
    (let* ((instrument (gethash name (registry-instruments registry)))
           (series (and instrument (gethash values (instrument-series instrument)))))
      (if series (series-count series) 0))))
