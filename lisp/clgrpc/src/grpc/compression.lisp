;;;; Message compression (doc/compression.md of gRPC): the "gzip" encoding.
;;;;
;;;; A peer names the encoding of its messages in grpc-encoding and the
;;;; encodings it can read in grpc-accept-encoding; each message's
;;;; Compressed-Flag says whether that one is compressed.  We read gzip and
;;;; identity, and send gzip only where the sender asked for it and the
;;;; receiver accepts it.
;;;;
;;;; Decompression is bounded: a message inflates at most to the receiver's
;;;; maximum message size, so a small compressed message cannot grow into a
;;;; large allocation (a "zip bomb").

(in-package #:clgrpc.grpc)

(defparameter +accepted-encodings+ "gzip"
  "grpc-accept-encoding: what we can decompress (identity always).")

(defun supported-encoding-p (name)
  (or (string= name "identity") (string= name "gzip")))

(defun accepts-gzip-p (accept-encoding)
  "Whether a grpc-accept-encoding value (a comma-separated list) names gzip."
  (and accept-encoding
       (loop for start = 0 then (1+ comma)
             for comma = (position #\, accept-encoding :start start)
             thereis (string= "gzip" (string-trim " " (subseq accept-encoding start comma)))
             while comma)))

(defun gzip-octets (octets start end)
  "OCTETS[START,END) compressed in the gzip format."
  (salza2:compress-data (if (and (zerop start) (= end (length octets)))
                            octets
                            (subseq octets start end))
                        'salza2:gzip-compressor))

(defun gunzip-octets (octets start end limit)
  "The gzip data OCTETS[START,END) decompressed, at most LIMIT octets.
Signals GRPC-ERROR: RESOURCE_EXHAUSTED past LIMIT, INTERNAL for data that
is not gzip, is malformed or ends early."
  (declare (type octets octets) (type index start end limit))
  (let ((state (handler-case (chipz:make-dstate 'chipz:gzip)
                 (error (e) (raise-grpc-error +internal+ "gzip: ~A" e))))
        (chunk (make-octets 16384))
        (out (make-obuf 1024)))
    (handler-case
        (loop
          (multiple-value-bind (consumed produced)
              (chipz:decompress chunk state octets :input-start start :input-end end)
            (declare (type index consumed produced))
            (incf start consumed)
            (when (> (+ (obuf-fill out) produced) limit)
              (raise-grpc-error +resource-exhausted+
                                "decompressed message exceeds the limit of ~D octets" limit))
            (obuf-write-bytes out chunk 0 produced)
            (when (chipz::dstate-done state)
              (return))
            (when (and (zerop consumed) (zerop produced))
              (raise-grpc-error +internal+ "gzip: compressed message ends early"))))
      (grpc-error (e) (error e))
      ;; Besides CHIPZ-ERROR, chipz signals plain errors on some malformed
      ;; streams (an unsupported header field, a distance code past the
      ;; table, a failed assertion): all of them mean bad data.
      (error (e)
        (raise-grpc-error +internal+ "gzip: ~A" e)))
    (subseq (obuf-data out) 0 (obuf-fill out))))
