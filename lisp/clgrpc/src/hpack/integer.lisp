;;;; HPACK prefixed integers, RFC 7541 section 5.1.
;;;;
;;;; An integer fills the low N bits of a first octet (whose high bits carry
;;;; the representation type) and continues in 7-bit groups, least
;;;; significant first.  Decoding is bounded: a hostile peer could otherwise
;;;; send endless continuation octets and grow a bignum, so anything above
;;;; +MAX-HPACK-INTEGER+ (far beyond any legal index, length or table size
;;;; we accept) is a decoding error.

(in-package #:clgrpc.hpack)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +max-hpack-integer+ #xffffffff
  "Largest integer the decoder accepts (2^32 - 1).")

(deftype hpack-int () '(integer 0 #xffffffff))
(deftype prefix-bits () '(integer 1 8))

(declaim (inline encode-integer))
(defun encode-integer (buf value prefix-bits flags)
  "Append VALUE as an HPACK integer with a PREFIX-BITS prefix; FLAGS are the
representation bits OR-ed into the first octet."
  (declare (type obuf buf) (type (unsigned-byte 62) value) (type prefix-bits prefix-bits)
           (type octet flags))
  (let ((max (1- (ash 1 prefix-bits))))
    (if (< value max)
        (obuf-write-u8 buf (logior flags value))
        (let ((rest (- value max)))
          (declare (type (unsigned-byte 62) rest))
          (obuf-write-u8 buf (logior flags max))
          (loop while (>= rest 128)
                do (obuf-write-u8 buf (logior 128 (logand rest 127)))
                   (setf rest (ash rest -7)))
          (obuf-write-u8 buf rest))))
  buf)

(declaim (ftype (function (octets index index prefix-bits)
                          (values hpack-int index &optional))
                decode-integer))
(defun decode-integer (octets pos end prefix-bits)
  "Decode the integer whose first octet is OCTETS[POS] (END bounds the input).
Returns (values integer next-position)."
  (declare (type octets octets) (type index pos end) (type prefix-bits prefix-bits))
  (when (>= pos end)
    (hpack-error "truncated integer"))
  (let* ((max (1- (ash 1 prefix-bits)))
         (value (logand (aref octets pos) max)))
    (declare (type (unsigned-byte 8) max))
    (incf pos)
    (if (< value max)
        (values value pos)
        (let ((value value) (shift 0))
          (declare (type (unsigned-byte 40) value) (type (integer 0 35) shift))
          (loop
            (when (>= pos end)
              (hpack-error "truncated integer"))
            (when (> shift 28)
              ;; 5 continuation octets already cover 2^35: longer is hostile.
              (hpack-error "integer encoding too long"))
            (let ((b (aref octets pos)))
              (incf pos)
              (setf value (+ value (ash (logand b 127) shift)))
              (incf shift 7)
              (when (> value +max-hpack-integer+)
                (hpack-error "integer exceeds ~D" +max-hpack-integer+))
              (when (< b 128)
                (return (values value pos)))))))))
