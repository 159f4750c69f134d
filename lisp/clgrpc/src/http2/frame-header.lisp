;;;; The 9-octet frame header (RFC 9113 section 4.1) and frame-size checks
;;;; (section 4.2).
;;;;
;;;;   Length (24) | Type (8) | Flags (8) | R (1) | Stream Identifier (31)
;;;;
;;;; BEGIN-FRAME / FINISH-FRAME let a frame be encoded in place: write the
;;;; header with a zero length, append the payload straight into the same
;;;; buffer (e.g. the HPACK encoder writing a header block), then patch the
;;;; length.  No payload is ever built in a separate vector.

(in-package #:clgrpc.http2)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(deftype stream-id () '(unsigned-byte 31))
(deftype frame-length () '(unsigned-byte 24))

(declaim (inline write-frame-header))
(defun write-frame-header (buf length type flags stream-id)
  "Append a frame header.  The reserved bit is always sent as 0."
  (declare (type obuf buf) (type frame-length length) (type octet type flags)
           (type stream-id stream-id))
  (multiple-value-bind (data pos) (obuf-reserve buf 9)
    (setf (aref data pos) (ldb (byte 8 16) length)
          (aref data (+ pos 1)) (ldb (byte 8 8) length)
          (aref data (+ pos 2)) (ldb (byte 8 0) length)
          (aref data (+ pos 3)) type
          (aref data (+ pos 4)) flags
          (aref data (+ pos 5)) (ldb (byte 8 24) stream-id)
          (aref data (+ pos 6)) (ldb (byte 8 16) stream-id)
          (aref data (+ pos 7)) (ldb (byte 8 8) stream-id)
          (aref data (+ pos 8)) (ldb (byte 8 0) stream-id)))
  buf)

(declaim (inline decode-frame-header))
(defun decode-frame-header (octets pos)
  "Decode the header at OCTETS[POS, POS+9); the caller guarantees 9 octets.
Returns (values length type flags stream-id); the reserved bit is ignored
as section 4.1 requires."
  (declare (type octets octets) (type index pos))
  (values (read-u24 octets pos)
          (aref octets (+ pos 3))
          (aref octets (+ pos 4))
          (read-u31 octets (+ pos 5))))

(defun check-frame-size (length type max-frame-size)
  "Section 4.2: a frame longer than our SETTINGS_MAX_FRAME_SIZE is a
FRAME_SIZE_ERROR.  We always treat it as a connection error (allowed for
every frame type, required for most) so the oversized payload never has to
be read."
  (declare (type frame-length length) (type octet type) (type frame-length max-frame-size))
  (when (> length max-frame-size)
    (connection-error +frame-size-error+ "~A frame of ~D octets exceeds maximum ~D"
                      (frame-type-name type) length max-frame-size))
  length)

(declaim (inline begin-frame))
(defun begin-frame (buf type flags stream-id)
  "Write a header with length 0 and return its position, for FINISH-FRAME."
  (declare (type obuf buf))
  (let ((pos (obuf-fill buf)))
    (write-frame-header buf 0 type flags stream-id)
    pos))

(declaim (inline finish-frame))
(defun finish-frame (buf header-pos)
  "Patch the length of the frame begun at HEADER-POS to cover everything
written since.  Returns the payload length."
  (declare (type obuf buf) (type index header-pos))
  (let ((length (- (obuf-fill buf) header-pos 9)))
    (unless (<= length +max-allowed-frame-size+)
      (error "frame payload of ~D octets exceeds 2^24-1" length))
    (obuf-set-u24 buf header-pos length)
    length))
