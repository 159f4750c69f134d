;;;; Octet vectors and the growable output buffer every encoder writes into.
;;;;
;;;; Why a hand-rolled buffer instead of flexi-streams or adjustable arrays:
;;;; encoders run once per frame/message, so every write must be an inlined
;;;; store into a (simple-array (unsigned-byte 8) (*)) with a fill index; an
;;;; adjustable vector or a stream would cost a generic-function call or a
;;;; header indirection per octet.  The buffer is reused (OBUF-RESET), so
;;;; steady-state encoding allocates nothing.

(in-package #:clgrpc.octets)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(deftype octet () '(unsigned-byte 8))
(deftype octets () '(simple-array (unsigned-byte 8) (*)))
(deftype index () `(integer 0 ,(1- array-dimension-limit)))

(declaim (inline make-octets))
(defun make-octets (length)
  "A fresh zero-filled octet vector of LENGTH."
  (make-array length :element-type 'octet :initial-element 0))

(defun octets-of (&rest values)
  "Octet vector of VALUES; handy for literals in tests and constants."
  (let ((v (make-octets (length values))))
    (loop for x in values for i of-type index from 0
          do (setf (aref v i) (the octet x)))
    v))

(defun hex-to-octets (string)
  "Parse hex digits into octets, ignoring whitespace (RFC examples are
written as spaced hex dumps)."
  (let ((digits (remove-if (lambda (c) (member c '(#\Space #\Tab #\Newline #\Return)))
                           (coerce string 'simple-string))))
    (unless (evenp (length digits))
      (error "odd number of hex digits in ~S" string))
    (let ((v (make-octets (floor (length digits) 2))))
      (dotimes (i (length v) v)
        (setf (aref v i) (parse-integer digits :start (* 2 i) :end (+ 2 (* 2 i))
                                               :radix 16))))))

(defun octets-to-hex (octets &key (start 0) end)
  "Lower-case hex string of OCTETS[START,END), for diagnostics and tests."
  (declare (type octets octets))
  (with-output-to-string (s)
    (loop for i from start below (or end (length octets))
          do (format s "~(~2,'0x~)" (aref octets i)))))

(declaim (inline str=))
(defun str= (a b)
  "STRING= without the keyword parsing and generic dispatch of CL:STRING=,
lengths first: HPACK and the HTTP/2 and gRPC layers compare field names and
values on every header they read or send."
  (declare (type string a b))
  (let ((n (length a)))
    (and (= n (length b))
         (if (and (typep a '(simple-array character (*)))
                  (typep b '(simple-array character (*))))
             (loop for i of-type index below n
                   always (char= (schar a i) (schar b i)))
             (string= a b)))))

(defun latin1-to-octets (string)
  "Each character of STRING as one octet.  HTTP/2 field names and values are
octet strings; mapping them 1:1 onto characters 0-255 is lossless and much
cheaper than a UTF-8 round trip."
  (let* ((s (coerce string 'simple-string))
         (v (make-octets (length s))))
    (dotimes (i (length s) v)
      (let ((code (char-code (schar s i))))
        (unless (< code 256)
          (error "character ~S is not an octet (code ~D)" (schar s i) code))
        (setf (aref v i) code)))))

(defun octets-to-latin1 (octets &optional (start 0) (end (length octets)))
  "Characters 0-255 for the octets OCTETS[START,END) (inverse of LATIN1-TO-OCTETS)."
  (declare (type octets octets) (type index start end))
  (let ((s (make-string (- end start))))
    (loop for i of-type index from start below end
          for j of-type index from 0
          do (setf (schar s j) (code-char (aref octets i))))
    s))

;;; ------------------------------------------------------------------
;;; Growable output buffer

(defstruct (obuf (:constructor %make-obuf (data)))
  "Output buffer: DATA holds the bytes, FILL is the number written so far."
  (data (make-octets 0) :type octets)
  (fill 0 :type index))

(defun make-obuf (&optional (capacity 1024))
  (%make-obuf (make-octets (max 16 capacity))))

(declaim (inline obuf-length))
(defun obuf-length (buf)
  (obuf-fill buf))

(declaim (inline obuf-reset))
(defun obuf-reset (buf)
  "Forget the contents but keep the storage, so the next encode allocates nothing."
  (setf (obuf-fill buf) 0)
  buf)

(defun obuf-give-away (buf)
  "Someone else keeps BUF's storage now: BUF starts again on new storage."
  (setf (obuf-data buf) (make-octets 4096)
        (obuf-fill buf) 0)
  buf)

(declaim (ftype (function (obuf index) (values octets &optional)) obuf-grow))
(defun obuf-grow (buf needed)
  "Replace the storage with one that holds at least NEEDED more octets.
Doubling keeps appends amortised O(1), and a write of more (a large bytes
field) gets a sixteenth more than it needs: the length prefixes patched in
after it (END-LENGTH-PREFIX) and the fields that follow then fit, where
doubling again would allocate twice the message and copy it."
  (let* ((old (obuf-data buf))
         (want (+ (obuf-fill buf) needed))
         (new (make-octets (max (* 2 (length old)) (+ want (ash want -4))))))
    (replace new old :end2 (obuf-fill buf))
    (setf (obuf-data buf) new)))

(declaim (inline obuf-ensure))
(defun obuf-ensure (buf n)
  "Make room for N more octets; returns the (possibly new) data vector."
  (declare (type obuf buf) (type index n))
  (let ((data (obuf-data buf)))
    (if (> (+ (obuf-fill buf) n) (length data))
        (obuf-grow buf n)
        data)))

(declaim (inline obuf-reserve))
(defun obuf-reserve (buf n)
  "Claim N octets at the end of BUF.  Returns (values data position): the
caller stores into DATA[position, position+N) directly."
  (declare (type obuf buf) (type index n))
  (let* ((data (obuf-ensure buf n))
         (pos (obuf-fill buf)))
    (setf (obuf-fill buf) (+ pos n))
    (values data pos)))

(declaim (inline obuf-write-u8 obuf-write-u16 obuf-write-u24 obuf-write-u32
                 obuf-write-u64))
(defun obuf-write-u8 (buf value)
  (declare (type obuf buf) (type octet value))
  (multiple-value-bind (data pos) (obuf-reserve buf 1)
    (setf (aref data pos) value))
  buf)

(defun obuf-write-u16 (buf value)
  (declare (type obuf buf) (type (unsigned-byte 16) value))
  (multiple-value-bind (data pos) (obuf-reserve buf 2)
    (setf (aref data pos) (ldb (byte 8 8) value)
          (aref data (+ pos 1)) (ldb (byte 8 0) value)))
  buf)

(defun obuf-write-u24 (buf value)
  (declare (type obuf buf) (type (unsigned-byte 24) value))
  (multiple-value-bind (data pos) (obuf-reserve buf 3)
    (setf (aref data pos) (ldb (byte 8 16) value)
          (aref data (+ pos 1)) (ldb (byte 8 8) value)
          (aref data (+ pos 2)) (ldb (byte 8 0) value)))
  buf)

(defun obuf-write-u32 (buf value)
  (declare (type obuf buf) (type (unsigned-byte 32) value))
  (multiple-value-bind (data pos) (obuf-reserve buf 4)
    (setf (aref data pos) (ldb (byte 8 24) value)
          (aref data (+ pos 1)) (ldb (byte 8 16) value)
          (aref data (+ pos 2)) (ldb (byte 8 8) value)
          (aref data (+ pos 3)) (ldb (byte 8 0) value)))
  buf)

(defun obuf-write-u64 (buf value)
  (declare (type obuf buf) (type (unsigned-byte 64) value))
  (multiple-value-bind (data pos) (obuf-reserve buf 8)
    (loop for i of-type (integer 0 8) from 0 below 8
          do (setf (aref data (+ pos i)) (ldb (byte 8 (- 56 (* 8 i))) value))))
  buf)

(declaim (inline obuf-write-bytes))
(defun obuf-write-bytes (buf octets &optional (start 0) (end (length octets)))
  "Append OCTETS[START,END)."
  (declare (type obuf buf) (type octets octets) (type index start end))
  (let ((n (- end start)))
    (multiple-value-bind (data pos) (obuf-reserve buf n)
      (replace data octets :start1 pos :start2 start :end2 end)))
  buf)

(defun obuf-write-latin1 (buf string)
  "Append STRING one octet per character (see LATIN1-TO-OCTETS)."
  (declare (type obuf buf) (type string string))
  (let ((n (length string)))
    (multiple-value-bind (data pos) (obuf-reserve buf n)
      (flet ((copy (s)
               (dotimes (i n)
                 (let ((code (char-code (char s i))))
                   (unless (< code 256)
                     (error "character ~S is not an octet" (char s i)))
                   (setf (aref data (+ pos i)) code)))))
        (declare (inline copy))
        (typecase string
          ((simple-array character (*)) (copy string))
          (simple-base-string (copy string))
          (t (copy string))))))
  buf)

;;; Back-patching: frame encoders write a 9-octet header with a zero length,
;;; encode the payload in place, then patch the length.  This is what lets
;;; frames be produced without an intermediate payload vector.

(declaim (inline obuf-set-u8 obuf-set-u24 obuf-set-u32))
(defun obuf-set-u8 (buf position value)
  (declare (type obuf buf) (type index position) (type octet value))
  (setf (aref (obuf-data buf) position) value))

(defun obuf-set-u24 (buf position value)
  (declare (type obuf buf) (type index position) (type (unsigned-byte 24) value))
  (let ((data (obuf-data buf)))
    (setf (aref data position) (ldb (byte 8 16) value)
          (aref data (+ position 1)) (ldb (byte 8 8) value)
          (aref data (+ position 2)) (ldb (byte 8 0) value))
    value))

(defun obuf-set-u32 (buf position value)
  (declare (type obuf buf) (type index position) (type (unsigned-byte 32) value))
  (let ((data (obuf-data buf)))
    (setf (aref data position) (ldb (byte 8 24) value)
          (aref data (+ position 1)) (ldb (byte 8 16) value)
          (aref data (+ position 2)) (ldb (byte 8 8) value)
          (aref data (+ position 3)) (ldb (byte 8 0) value))
    value))

(defun obuf-contents (buf)
  "A fresh vector with everything written so far."
  (declare (type obuf buf))
  (subseq (obuf-data buf) 0 (obuf-fill buf)))

(defun obuf-subseq (buf start &optional (end (obuf-fill buf)))
  "A fresh copy of the written octets [START,END)."
  (declare (type obuf buf) (type index start end))
  (assert (<= start end (obuf-fill buf)))
  (subseq (obuf-data buf) start end))

(declaim (inline obuf-view))
(defun obuf-view (buf &optional (start 0))
  "Zero-copy view of the written octets: (values data start end).  Valid only
until the next write, which may replace DATA."
  (declare (type obuf buf) (type index start))
  (values (obuf-data buf) start (obuf-fill buf)))

;;; ------------------------------------------------------------------
;;; Big-endian readers.  Callers check bounds once per frame/field, so these
;;; are plain inlined loads.

(declaim (inline read-u8 read-u16 read-u24 read-u32 read-u31 read-u64))
(defun read-u8 (octets pos)
  (declare (type octets octets) (type index pos))
  (aref octets pos))

(defun read-u16 (octets pos)
  (declare (type octets octets) (type index pos))
  (logior (ash (aref octets pos) 8) (aref octets (+ pos 1))))

(defun read-u24 (octets pos)
  (declare (type octets octets) (type index pos))
  (logior (ash (aref octets pos) 16)
          (ash (aref octets (+ pos 1)) 8)
          (aref octets (+ pos 2))))

(defun read-u32 (octets pos)
  (declare (type octets octets) (type index pos))
  (logior (ash (aref octets pos) 24)
          (ash (aref octets (+ pos 1)) 16)
          (ash (aref octets (+ pos 2)) 8)
          (aref octets (+ pos 3))))

(defun read-u31 (octets pos)
  "32-bit big-endian value with the top (reserved) bit cleared: HTTP/2 stream
identifiers and window increments."
  (declare (type octets octets) (type index pos))
  (logand #x7fffffff (read-u32 octets pos)))

(defun read-u64 (octets pos)
  (declare (type octets octets) (type index pos))
  (logior (ash (read-u32 octets pos) 32) (read-u32 octets (+ pos 4))))
