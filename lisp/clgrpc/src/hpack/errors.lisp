;;;; The one condition HPACK decoding signals.
;;;;
;;;; RFC 7541 section 2.3.3 / 4.2 / 5 failures (bad index, bad integer,
;;;; bad Huffman padding, an oversized table-size update, truncation) all
;;;; make the header block undecodable; the only recovery is for the HTTP/2
;;;; layer to tear the connection down with COMPRESSION_ERROR (RFC 9113
;;;; section 4.3).  Decoders must signal this and nothing else on malformed
;;;; input -- never a TYPE-ERROR or an index out of bounds.

(in-package #:clgrpc.hpack)

(define-condition hpack-error (error)
  ((message :initarg :message :reader hpack-error-message))
  (:report (lambda (c s) (format s "HPACK decoding error: ~A" (hpack-error-message c))))
  (:documentation "Malformed HPACK input; maps to HTTP/2 COMPRESSION_ERROR."))

(defun hpack-error (format-control &rest args)
  (error 'hpack-error :message (apply #'format nil format-control args)))
