;;;; Protobuf wire-format readers, field skipping and unknown-field capture.
;;;;
;;;; Readers work on a slice OCTETS[POS,END) of a received buffer and return
;;;; (values value next-pos): no reader object and no allocation for scalar
;;;; fields, so generated parse loops stay allocation-free apart from the
;;;; message itself.  Every bound is checked against END (not the vector
;;;; length: a message is usually a slice of a larger DATA frame buffer).
;;;;
;;;; Unknown fields are preserved as their raw octets (tag included): a
;;;; message keeps them in an OBUF and re-emits them verbatim, which is what
;;;; proto3 (since 3.5) requires and costs nothing when there are none.

(in-package #:clgrpc.protobuf)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +max-group-depth+ 100
  "Nesting limit for skipping groups, so hostile input cannot blow the stack.")

(defconstant +max-message-depth+ 100
  "Nesting limit for decoding messages within messages (protobuf-java's
default recursion limit), so hostile input cannot blow the stack.")

(declaim (inline truncated))
(defun truncated (pos)
  (decode-error pos "truncated input"))

;;; ------------------------------------------------------------------
;;; varints

(declaim (ftype (function (octets index index) (values u64 index &optional)) read-varint-slow))
(defun read-varint-slow (octets pos end)
  "Varint of 3 or more octets starting at POS (general case)."
  (declare (type octets octets) (type index pos end))
  (let ((result 0) (shift 0) (p pos))
    (declare (type u64 result) (type (integer 0 70) shift) (type index p))
    (loop
      (when (>= p end)
        (truncated pos))
      (let ((b (aref octets p)))
        (incf p)
        ;; Modular 64-bit shift: the 10th octet contributes only bit 63,
        ;; higher bits are dropped like the reference implementations do.
        (setf result (logior result (ldb (byte 64 0) (ash (logand b 127)
                                                            (the (integer 0 63) shift)))))
        (when (< b 128)
          (return (values result p)))
        (incf shift 7)
        (when (> shift 63)
          (decode-error pos "varint longer than 10 octets"))))))

(declaim (inline read-varint))
(defun read-varint (octets pos end)
  "Unsigned 64-bit varint at POS.  Returns (values value next-pos).
One- and two-octet varints (tags, lengths, small ints: nearly all of them)
are decoded inline."
  (declare (type octets octets) (type index pos end))
  (when (>= pos end)
    (truncated pos))
  (let ((b (aref octets pos)))
    (cond ((< b 128)
           (values b (1+ pos)))
          ((and (< (1+ pos) end) (< (aref octets (1+ pos)) 128))
           (values (logior (logand b 127) (ash (aref octets (1+ pos)) 7)) (+ pos 2)))
          (t
           (read-varint-slow octets pos end)))))

(declaim (inline read-uint64 read-uint32 read-int32 read-int64 read-sint32 read-sint64
                 read-bool read-enum))
(defun read-uint64 (octets pos end) (read-varint octets pos end))

(defun read-uint32 (octets pos end)
  "Low 32 bits of the varint, as the reference parsers do."
  (multiple-value-bind (v p) (read-varint octets pos end)
    (values (ldb (byte 32 0) v) p)))

(defun read-int32 (octets pos end)
  (multiple-value-bind (v p) (read-varint octets pos end)
    (let ((low (ldb (byte 32 0) v)))
      (values (if (logbitp 31 low) (- low (ash 1 32)) low) p))))

(defun read-int64 (octets pos end)
  (multiple-value-bind (v p) (read-varint octets pos end)
    (values (if (logbitp 63 v) (- v (ash 1 64)) v) p)))

(defun read-sint32 (octets pos end)
  (multiple-value-bind (v p) (read-varint octets pos end)
    (values (zigzag-decode-32 (ldb (byte 32 0) v)) p)))

(defun read-sint64 (octets pos end)
  (multiple-value-bind (v p) (read-varint octets pos end)
    (values (zigzag-decode-64 v) p)))

(defun read-bool (octets pos end)
  (multiple-value-bind (v p) (read-varint octets pos end)
    (values (/= v 0) p)))

(defun read-enum (octets pos end) (read-int32 octets pos end))

;;; ------------------------------------------------------------------
;;; tags

(declaim (inline read-tag))
(defun read-tag (octets pos end)
  "Field key at POS.  Returns (values field-number wire-type next-pos).
Field number 0 and wire types 6 and 7 are errors."
  (multiple-value-bind (tag p) (read-varint octets pos end)
    (let ((field (ash tag -3))
          (wire-type (logand tag 7)))
      (when (or (zerop field) (> field +max-field-number+) (> wire-type 5))
        (decode-error pos "invalid tag ~D" tag))
      (values field wire-type p))))

;;; ------------------------------------------------------------------
;;; fixed width, little-endian

(declaim (inline read-fixed32 read-fixed64 read-sfixed32 read-sfixed64 read-float
                 read-double))
(defun read-fixed32 (octets pos end)
  (declare (type octets octets) (type index pos end))
  (when (> (+ pos 4) end) (truncated pos))
  (values (logior (aref octets pos)
                  (ash (aref octets (+ pos 1)) 8)
                  (ash (aref octets (+ pos 2)) 16)
                  (ash (aref octets (+ pos 3)) 24))
          (+ pos 4)))

(defun read-fixed64 (octets pos end)
  (declare (type octets octets) (type index pos end))
  (when (> (+ pos 8) end) (truncated pos))
  (values (logior (the u32 (read-fixed32 octets pos end))
                  (ash (the u32 (read-fixed32 octets (+ pos 4) end)) 32))
          (+ pos 8)))

(defun read-sfixed32 (octets pos end)
  (multiple-value-bind (v p) (read-fixed32 octets pos end)
    (values (if (logbitp 31 v) (- v (ash 1 32)) v) p)))

(defun read-sfixed64 (octets pos end)
  (multiple-value-bind (v p) (read-fixed64 octets pos end)
    (values (if (logbitp 63 v) (- v (ash 1 64)) v) p)))

(defun read-float (octets pos end)
  (multiple-value-bind (v p) (read-fixed32 octets pos end)
    (values (sb-kernel:make-single-float (if (logbitp 31 v) (- v (ash 1 32)) v)) p)))

(defun read-double (octets pos end)
  (declare (type octets octets) (type index pos end))
  (when (> (+ pos 8) end) (truncated pos))
  (let ((lo (read-fixed32 octets pos end))
        (hi (read-fixed32 octets (+ pos 4) end)))
    (values (sb-kernel:make-double-float (if (logbitp 31 hi) (- hi (ash 1 32)) hi) lo)
            (+ pos 8))))

;;; ------------------------------------------------------------------
;;; length-delimited

(declaim (inline read-length-delimited))
(defun read-length-delimited (octets pos end)
  "Length-prefixed payload at POS, without copying.
Returns (values payload-start payload-end next-pos)."
  (declare (type octets octets) (type index pos end))
  (multiple-value-bind (len p) (read-varint octets pos end)
    (when (> len (- end p))
      (decode-error pos "length ~D exceeds the ~D octets left" len (- end p)))
    (let ((stop (+ p len)))
      (values p stop stop))))

(defun read-bytes (octets pos end)
  "A bytes field's value as a fresh vector.  Returns (values octets next-pos)."
  (multiple-value-bind (start stop next) (read-length-delimited octets pos end)
    (values (subseq octets start stop) next)))

(defun read-utf8-string (octets pos end)
  "A string field's value, strictly UTF-8 decoded.  Returns (values string next-pos)."
  (multiple-value-bind (start stop next) (read-length-delimited octets pos end)
    (values (handler-case (utf8-to-string octets start stop)
              (utf8-decoding-error (e)
                (decode-error (utf8-decoding-error-position e) "invalid UTF-8 in string")))
            next)))

;;; ------------------------------------------------------------------
;;; packed repeated scalars

(defun read-packed (octets pos end kind)
  "Decode a packed field's payload at POS (length prefix included).
Returns (values list next-pos).  KIND is as for WRITE-PACKED."
  (declare (type octets octets) (type index pos end))
  (multiple-value-bind (start stop next) (read-length-delimited octets pos end)
    (let ((p start) (head (list nil)))
      (declare (type index p))
      (let ((tail head))
        (macrolet ((collect-all (reader)
                     `(loop while (< p stop)
                            do (multiple-value-bind (v p2) (,reader octets p stop)
                                 (let ((cell (list v)))
                                   (setf (cdr tail) cell tail cell p p2))))))
          (ecase kind
            ((:int32 :enum) (collect-all read-int32))
            (:int64 (collect-all read-int64))
            (:uint32 (collect-all read-uint32))
            (:uint64 (collect-all read-uint64))
            (:sint32 (collect-all read-sint32))
            (:sint64 (collect-all read-sint64))
            (:bool (collect-all read-bool))
            (:fixed32 (collect-all read-fixed32))
            (:fixed64 (collect-all read-fixed64))
            (:sfixed32 (collect-all read-sfixed32))
            (:sfixed64 (collect-all read-sfixed64))
            (:float (collect-all read-float))
            (:double (collect-all read-double)))))
      (values (cdr head) next))))

;;; ------------------------------------------------------------------
;;; unknown fields

(defun skip-field (octets pos end wire-type &optional field-number (depth 0))
  "Skip the value of a field whose key was just read (POS is after the key).
For a group, FIELD-NUMBER must be the group's field number.  Returns the
position after the value."
  (declare (type octets octets) (type index pos end) (type fixnum depth))
  (case wire-type
    (#.+wire-varint+ (nth-value 1 (read-varint octets pos end)))
    (#.+wire-fixed64+ (if (> (+ pos 8) end) (truncated pos) (+ pos 8)))
    (#.+wire-fixed32+ (if (> (+ pos 4) end) (truncated pos) (+ pos 4)))
    (#.+wire-length-delimited+ (nth-value 2 (read-length-delimited octets pos end)))
    (#.+wire-start-group+
     (when (>= depth +max-group-depth+)
       (decode-error pos "groups nested too deeply"))
     (let ((p pos))
       (loop
         (multiple-value-bind (field type p2) (read-tag octets p end)
           (when (= type +wire-end-group+)
             (unless (eql field field-number)
               (decode-error p "mismatched end-group ~D for group ~D" field field-number))
             (return p2))
           (setf p (skip-field octets p2 end type field (1+ depth)))))))
    (#.+wire-end-group+ (decode-error pos "unexpected end-group"))
    (t (decode-error pos "invalid wire type ~D" wire-type))))

(defun collect-unknown-field (unknown octets tag-start pos end wire-type field-number)
  "Skip an unknown field and append its raw octets (key included, from
TAG-START) to the OBUF UNKNOWN so the message can re-emit it.  Returns the
position after the field."
  (declare (type obuf unknown) (type octets octets) (type index tag-start pos end))
  (let ((next (skip-field octets pos end wire-type field-number)))
    (obuf-write-bytes unknown octets tag-start next)
    next))
