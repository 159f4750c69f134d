;;;; Protobuf wire-format writers and size functions.
;;;;
;;;; Writers append raw values (no tag) to an OBUF; WRITE-TAG writes the key.
;;;; Generated message code computes sizes first (the *-SIZE functions) so
;;;; nested messages get their length prefix without a temporary buffer.
;;;;
;;;; Encoding rules (protobuf encoding guide): integers are base-128 varints;
;;;; negative int32/int64/enum values are sign-extended to 64 bits, hence 10
;;;; octets; sint32/sint64 use zigzag; fixed/sfixed/float/double are
;;;; little-endian.

(in-package #:clgrpc.protobuf)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(deftype u64 () '(unsigned-byte 64))
(deftype s64 () '(signed-byte 64))
(deftype s32 () '(signed-byte 32))
(deftype u32 () '(unsigned-byte 32))

;;; ------------------------------------------------------------------
;;; zigzag

(declaim (inline zigzag-encode-32 zigzag-decode-32 zigzag-encode-64 zigzag-decode-64))
(defun zigzag-encode-32 (n)
  (declare (type s32 n))
  (logand #xffffffff (logxor (ash n 1) (ash n -31))))
(defun zigzag-decode-32 (n)
  (declare (type u32 n))
  (logxor (ash n -1) (- (logand n 1))))
(defun zigzag-encode-64 (n)
  (declare (type s64 n))
  (logand #xffffffffffffffff (logxor (ash n 1) (ash n -63))))
(defun zigzag-decode-64 (n)
  (declare (type u64 n))
  (logxor (ash n -1) (- (logand n 1))))

;;; ------------------------------------------------------------------
;;; sizes

(declaim (inline varint-size int32-size int64-size sint32-size sint64-size tag-size
                 length-delimited-size))
(defun varint-size (v)
  (declare (type u64 v))
  (cond ((< v (ash 1 7)) 1)
        ((< v (ash 1 14)) 2)
        ((< v (ash 1 21)) 3)
        ((< v (ash 1 28)) 4)
        ((< v (ash 1 35)) 5)
        ((< v (ash 1 42)) 6)
        ((< v (ash 1 49)) 7)
        ((< v (ash 1 56)) 8)
        ((< v (ash 1 63)) 9)
        (t 10)))
(defun int32-size (v)
  (declare (type s32 v))
  (if (minusp v) 10 (varint-size v)))
(defun int64-size (v)
  (declare (type s64 v))
  (varint-size (ldb (byte 64 0) v)))
(defun sint32-size (v)
  (declare (type s32 v))
  (varint-size (zigzag-encode-32 v)))
(defun sint64-size (v)
  (declare (type s64 v))
  (varint-size (zigzag-encode-64 v)))
(defun tag-size (field-number)
  (declare (type (integer 1 #.+max-field-number+) field-number))
  (varint-size (ash field-number 3)))
(defun length-delimited-size (length)
  "Octets of a length prefix plus LENGTH octets of payload."
  (declare (type index length))
  (+ (varint-size length) length))

(defun string-size (string)
  "Octets of a string field's value: length prefix plus UTF-8 octets."
  (length-delimited-size (utf8-length string)))

;;; ------------------------------------------------------------------
;;; varints

(declaim (inline write-varint))
(defun write-varint (buf value)
  (declare (type obuf buf) (type u64 value))
  (if (< value 128)
      (obuf-write-u8 buf value)
      (multiple-value-bind (data pos) (obuf-reserve buf (varint-size value))
        (let ((v value))
          (declare (type u64 v))
          (loop while (>= v 128)
                do (setf (aref data pos) (logior 128 (logand v 127))
                         v (ash v -7))
                   (incf pos))
          (setf (aref data pos) v))))
  buf)

(declaim (inline write-uint32 write-uint64 write-int32 write-int64 write-sint32
                 write-sint64 write-bool write-enum write-tag write-length-prefix))
(defun write-uint32 (buf v) (declare (type u32 v)) (write-varint buf v))
(defun write-uint64 (buf v) (declare (type u64 v)) (write-varint buf v))
(defun write-int32 (buf v)
  (declare (type s32 v))
  (write-varint buf (ldb (byte 64 0) v)))
(defun write-int64 (buf v)
  (declare (type s64 v))
  (write-varint buf (ldb (byte 64 0) v)))
(defun write-sint32 (buf v) (declare (type s32 v)) (write-varint buf (zigzag-encode-32 v)))
(defun write-sint64 (buf v) (declare (type s64 v)) (write-varint buf (zigzag-encode-64 v)))
(defun write-bool (buf v) (obuf-write-u8 buf (if v 1 0)))
(defun write-enum (buf v) (write-int32 buf v))
(defun write-tag (buf field-number wire-type)
  (write-varint buf (make-tag field-number wire-type)))
(defun write-length-prefix (buf length)
  (declare (type index length))
  (write-varint buf length))

;;; ------------------------------------------------------------------
;;; fixed width, little-endian

(declaim (inline write-fixed32 write-fixed64 write-sfixed32 write-sfixed64
                 write-float write-double))
(defun write-fixed32 (buf v)
  (declare (type obuf buf) (type u32 v))
  (multiple-value-bind (data pos) (obuf-reserve buf 4)
    (setf (aref data pos) (ldb (byte 8 0) v)
          (aref data (+ pos 1)) (ldb (byte 8 8) v)
          (aref data (+ pos 2)) (ldb (byte 8 16) v)
          (aref data (+ pos 3)) (ldb (byte 8 24) v)))
  buf)
(defun write-fixed64 (buf v)
  (declare (type obuf buf) (type u64 v))
  (write-fixed32 buf (ldb (byte 32 0) v))
  (write-fixed32 buf (ldb (byte 32 32) v)))
(defun write-sfixed32 (buf v)
  (declare (type s32 v))
  (write-fixed32 buf (ldb (byte 32 0) v)))
(defun write-sfixed64 (buf v)
  (declare (type s64 v))
  (write-fixed64 buf (ldb (byte 64 0) v)))
(defun write-float (buf v)
  (declare (type single-float v))
  (write-fixed32 buf (ldb (byte 32 0) (sb-kernel:single-float-bits v))))
(defun write-double (buf v)
  (declare (type double-float v))
  (write-fixed32 buf (sb-kernel:double-float-low-bits v))
  (write-fixed32 buf (ldb (byte 32 0) (sb-kernel:double-float-high-bits v))))

;;; ------------------------------------------------------------------
;;; length-delimited

(defun write-bytes (buf octets &optional (start 0) (end (length octets)))
  "Length prefix and OCTETS[START,END): a bytes field's value."
  (declare (type obuf buf) (type octets octets) (type index start end))
  (write-varint buf (- end start))
  (obuf-write-bytes buf octets start end))

(defun write-utf8-string (buf string)
  "Length prefix and the UTF-8 of STRING: a string field's value (counted
once, for both)."
  (declare (type obuf buf) (type string string))
  (let ((octets (utf8-length string)))
    (write-varint buf octets)
    (obuf-write-utf8 buf string octets)))

;;; ------------------------------------------------------------------
;;; packed repeated scalars (proto3 default for numeric repeated fields)

(deftype packed-kind ()
  '(member :int32 :int64 :uint32 :uint64 :sint32 :sint64 :bool :enum
    :fixed32 :fixed64 :sfixed32 :sfixed64 :float :double))

(defun packed-payload-size (values kind)
  "Octets of the packed payload (without tag and length) for VALUES."
  (declare (type sequence values) (type packed-kind kind))
  (let ((n 0))
    (declare (type index n))
    (case kind
      ((:fixed32 :sfixed32 :float) (setf n (* 4 (length values))))
      ((:fixed64 :sfixed64 :double) (setf n (* 8 (length values))))
      (:bool (setf n (length values)))
      (t (map nil (lambda (v)
                    (incf n (ecase kind
                              ((:int32 :enum) (int32-size v))
                              (:int64 (int64-size v))
                              ((:uint32 :uint64) (varint-size v))
                              (:sint32 (sint32-size v))
                              (:sint64 (sint64-size v)))))
              values)))
    n))

(defun write-packed (buf field-number values kind)
  "Write repeated scalar VALUES (a list or vector) as one packed field.
Nothing is written for an empty sequence."
  (declare (type obuf buf) (type sequence values) (type packed-kind kind))
  (unless (zerop (length values))
    (write-tag buf field-number +wire-length-delimited+)
    (write-varint buf (packed-payload-size values kind))
    (macrolet ((each (writer) `(map nil (lambda (v) (,writer buf v)) values)))
      (ecase kind
        ((:int32 :enum) (each write-int32))
        (:int64 (each write-int64))
        ((:uint32 :uint64) (each write-varint))
        (:sint32 (each write-sint32))
        (:sint64 (each write-sint64))
        (:bool (each write-bool))
        (:fixed32 (each write-fixed32))
        (:fixed64 (each write-fixed64))
        (:sfixed32 (each write-sfixed32))
        (:sfixed64 (each write-sfixed64))
        (:float (each write-float))
        (:double (each write-double)))))
  buf)
