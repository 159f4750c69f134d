;;;; gRPC's log-bucket latency histogram, the one grpc.testing.HistogramData
;;;; carries: bucket 0 holds [0, m) and bucket n holds [m^n, m^(n+1)), where
;;;; m = 1 + resolution, with enough buckets to reach max_possible.  The
;;;; driver merges every client's histogram bucket by bucket, so a worker
;;;; must bin exactly as gRPC's C++ and Go workers do.

(in-package #:latency-histogram)

(defconstant +max-histogram-buckets+ 100000
  "More buckets than a 1% histogram up to an hour in nanoseconds needs; a
configuration asking for more would cost each client thread that much
memory, and is refused.")

(defstruct (latency-histogram (:constructor %make-latency-histogram))
  (log-multiplier 0d0 :type double-float)
  (buckets nil :type (simple-array (unsigned-byte 32) (*)))
  (min-seen 0d0 :type double-float)
  (max-seen 0d0 :type double-float)
  (max-possible 0d0 :type double-float)
  (sum 0d0 :type double-float)
  (sum-of-squares 0d0 :type double-float)
  (count 0 :type (unsigned-byte 62)))

(defun histogram-bucket-count (resolution max-possible)
  "The number of buckets of a histogram with these parameters, as gRPC
computes it."
  (1+ (floor (log (float max-possible 1d0)) (log (+ 1d0 resolution)))))

(defun make-latency-histogram (resolution max-possible)
  "An empty histogram.  RESOLUTION must be positive and MAX-POSSIBLE at
least 1, with at most +MAX-HISTOGRAM-BUCKETS+ buckets between them."
  (let ((resolution (float resolution 1d0))
        (max-possible (float max-possible 1d0)))
    (unless (and (plusp resolution) (>= max-possible 1d0)
                 (<= (histogram-bucket-count resolution max-possible) +max-histogram-buckets+))
      (error "no latency histogram of resolution ~A up to ~A: want a positive resolution, ~
              a maximum of at least 1, and at most ~D buckets"
             resolution max-possible +max-histogram-buckets+))
    (%make-latency-histogram
     :log-multiplier (log (+ 1d0 resolution))
     :buckets (make-array (histogram-bucket-count resolution max-possible)
                          :element-type '(unsigned-byte 32) :initial-element 0)
     :min-seen max-possible :max-seen 0d0 :max-possible max-possible)))

(defun histogram-add (h value)
  "Record VALUE (nanoseconds, not negative).  Values below 1 count in
bucket 0 and values beyond max_possible in the last bucket, as in gRPC's
histogram.  It runs once per call measured, so it is compiled to neither
allocate nor dispatch."
  (declare (type latency-histogram h) (type (integer 0 #.most-positive-fixnum) value)
           (optimize speed))
  (let* ((x (float value 1d0))
         (buckets (latency-histogram-buckets h))
         (y (max 1d0 (min x (latency-histogram-max-possible h))))
         ;; At most log(max_possible) / log(1 + resolution), which the
         ;; bucket count bounds: a fixnum.
         (q (/ (log (the (double-float 1d0) y)) (latency-histogram-log-multiplier h)))
         (i (min (1- (length buckets))
                 (truncate (the (double-float 0d0 #.(float +max-histogram-buckets+ 1d0)) q)))))
    (incf (latency-histogram-sum h) x)
    (incf (latency-histogram-sum-of-squares h) (* x x))
    (incf (latency-histogram-count h))
    (setf (latency-histogram-min-seen h) (min x (latency-histogram-min-seen h))
          (latency-histogram-max-seen h) (max x (latency-histogram-max-seen h)))
    (setf (aref buckets i) (min #xFFFFFFFF (1+ (aref buckets i))))
    h))

(defun histogram-merge (into from)
  "Add FROM's values to INTO (histograms of the same parameters)."
  (let ((a (latency-histogram-buckets into))
        (b (latency-histogram-buckets from)))
    (assert (= (length a) (length b)))
    (dotimes (i (length a))
      (setf (aref a i) (min #xFFFFFFFF (+ (aref a i) (aref b i)))))
    (incf (latency-histogram-sum into) (latency-histogram-sum from))
    (incf (latency-histogram-sum-of-squares into) (latency-histogram-sum-of-squares from))
    (incf (latency-histogram-count into) (latency-histogram-count from))
    (setf (latency-histogram-min-seen into) (min (latency-histogram-min-seen into)
                                                 (latency-histogram-min-seen from))
          (latency-histogram-max-seen into) (max (latency-histogram-max-seen into)
                                                 (latency-histogram-max-seen from)))
    into))

(defun histogram-clear (h)
  (fill (latency-histogram-buckets h) 0)
  (setf (latency-histogram-sum h) 0d0
        (latency-histogram-sum-of-squares h) 0d0
        (latency-histogram-count h) 0
        (latency-histogram-min-seen h) (latency-histogram-max-possible h)
        (latency-histogram-max-seen h) 0d0)
  h)
