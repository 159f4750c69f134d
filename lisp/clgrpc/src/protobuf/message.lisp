;;;; Runtime support for generated message code (codegen/): the generic
;;;; entry points, and length prefixes written after the fact.
;;;;
;;;; A nested message's length prefix is reserved as one octet, the message
;;;; is written, and the prefix patched; only a message of 128 octets or more
;;;; needs its bytes moved up to make room for a longer varint.  Encoding is
;;;; then one pass with no size computation and no size cache in the message
;;;; objects (which stay plain structures, comparable with EQUALP).

(in-package #:clgrpc.protobuf)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defgeneric encode-message (message buf)
  (:documentation "Append MESSAGE's wire encoding to the OBUF BUF."))

(defgeneric decode-message (type octets &optional start end)
  (:documentation "Decode a message of TYPE (the struct's symbol) from OCTETS[START,END)."))

(defun serialize (message)
  "MESSAGE's wire encoding as a fresh octet vector."
  (let ((buf (make-obuf 64)))
    (encode-message message buf)
    (obuf-contents buf)))

(defun deserialize (type octets &key (start 0) (end (length octets)))
  (decode-message type octets start end))

(defun message-size (message)
  "Octets MESSAGE encodes to."
  (let ((buf (make-obuf 64)))
    (encode-message message buf)
    (obuf-length buf)))

(declaim (inline begin-length-prefix))
(defun begin-length-prefix (buf)
  "Reserve a length prefix; returns its position for END-LENGTH-PREFIX."
  (declare (type obuf buf))
  (prog1 (obuf-fill buf)
    (obuf-write-u8 buf 0)))

(defun end-length-prefix (buf start)
  "Patch the prefix reserved at START with the length of what followed it."
  (declare (type obuf buf) (type index start))
  (let ((length (- (obuf-fill buf) start 1)))
    (if (< length 128)
        (setf (aref (obuf-data buf) start) length)
        (let ((extra (1- (varint-size length))))
          (obuf-reserve buf extra)
          (let ((data (obuf-data buf)))
            (replace data data :start1 (+ start 1 extra) :start2 (+ start 1)
                               :end2 (+ start 1 length))
            (let ((pos start) (v length))
              (declare (type index pos v))
              (loop while (>= v 128)
                    do (setf (aref data pos) (logior 128 (logand v 127))
                             v (ash v -7))
                       (incf pos))
              (setf (aref data pos) v)))))
    buf))
