;;;; UTF-8 encoding straight into an OBUF and strict decoding from a slice.
;;;;
;;;; Protobuf `string` fields are UTF-8.  sb-ext:string-to-octets would
;;;; allocate an intermediate vector per field and its decoder substitutes
;;;; or signals via restarts; here encoding writes in place and decoding
;;;; rejects malformed input (overlongs, surrogates, > U+10FFFF) with a
;;;; condition the protobuf layer turns into a parse error.  ASCII, by far
;;;; the common case in gRPC payloads, takes a fast path.

(in-package #:clgrpc.octets)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(define-condition utf8-decoding-error (error)
  ((position :initarg :position :reader utf8-decoding-error-position))
  (:report (lambda (c s)
             (format s "invalid UTF-8 at octet ~D" (utf8-decoding-error-position c)))))

(declaim (inline char-utf8-length))
(defun char-utf8-length (code)
  (declare (type (integer 0 #x10ffff) code))
  (cond ((< code #x80) 1)
        ((< code #x800) 2)
        ((< code #x10000) 3)
        (t 4)))

(defun utf8-length (string)
  "Number of octets STRING occupies in UTF-8."
  (declare (type string string))
  (let ((n 0))
    (declare (type index n))
    (flet ((count-it (s)
             (dotimes (i (length s))
               (incf n (char-utf8-length (char-code (char s i)))))))
      (declare (inline count-it))
      (typecase string
        ((simple-array character (*)) (count-it string))
        (simple-base-string (setf n (length string)))
        (t (count-it string))))
    n))

(defun obuf-write-utf8 (buf string &optional (octets (utf8-length string)))
  "Append STRING encoded as UTF-8 (no length prefix).  OCTETS must be its
UTF8-LENGTH, for a caller that already counted it (a length prefix): a
count that differs is an error, signalled before the fill moves."
  (declare (type obuf buf) (type string string) (type index octets))
  (let* ((data (obuf-ensure buf octets))
         (start (obuf-fill buf))
         (pos start))
    (declare (type index start pos))
    (flet ((enc (s)
             (dotimes (i (length s))
               (let ((code (char-code (char s i))))
                 (cond ((< code #x80)
                        (setf (aref data pos) code)
                        (incf pos))
                       ((< code #x800)
                        (setf (aref data pos) (logior #xc0 (ash code -6))
                              (aref data (+ pos 1)) (logior #x80 (logand code #x3f)))
                        (incf pos 2))
                       ((< code #x10000)
                        (setf (aref data pos) (logior #xe0 (ash code -12))
                              (aref data (+ pos 1)) (logior #x80 (logand (ash code -6) #x3f))
                              (aref data (+ pos 2)) (logior #x80 (logand code #x3f)))
                        (incf pos 3))
                       (t
                        (setf (aref data pos) (logior #xf0 (ash code -18))
                              (aref data (+ pos 1)) (logior #x80 (logand (ash code -12) #x3f))
                              (aref data (+ pos 2)) (logior #x80 (logand (ash code -6) #x3f))
                              (aref data (+ pos 3)) (logior #x80 (logand code #x3f)))
                        (incf pos 4)))))))
      (declare (inline enc))
      (typecase string
        ((simple-array character (*)) (enc string))
        (t (enc string))))
    (unless (= (- pos start) octets)
      (error "obuf-write-utf8: ~D octets of UTF-8 where ~D were counted" (- pos start) octets))
    (setf (obuf-fill buf) pos)
    buf))

(defun string-to-utf8 (string)
  "Fresh octet vector with STRING in UTF-8."
  (let* ((octets (utf8-length string))
         (buf (make-obuf octets)))
    (obuf-write-utf8 buf string octets)
    (obuf-contents buf)))

(defun utf8-to-string (octets &optional (start 0) (end (length octets)))
  "Decode OCTETS[START,END) as strict UTF-8.  Signals UTF8-DECODING-ERROR."
  (declare (type octets octets) (type index start end))
  ;; ASCII fast path: one scan, then a direct copy.
  (when (loop for i of-type index from start below end
              always (< (aref octets i) #x80))
    (let ((s (make-string (- end start))))
      (loop for i of-type index from start below end
            for j of-type index from 0
            do (setf (schar s j) (code-char (aref octets i))))
      (return-from utf8-to-string s)))
  (let ((s (make-string (- end start)))
        (i start)
        (j 0))
    (declare (type index i j))
    (flet ((bad () (error 'utf8-decoding-error :position i))
           (cont (k)
             (declare (type index k))
             (if (< k end)
                 (let ((b (aref octets k)))
                   (if (= (logand b #xc0) #x80) (logand b #x3f) -1))
                 -1)))
      (declare (inline cont))
      (loop while (< i end)
            do (let ((b0 (aref octets i))
                     (code 0))
                 (declare (type (integer 0 #x10ffff) code))
                 (cond ((< b0 #x80)
                        (setf code b0) (incf i))
                       ((< b0 #xc2) (bad)) ; continuation byte or overlong 2-byte lead
                       ((< b0 #xe0)
                        (let ((c1 (cont (+ i 1))))
                          (when (minusp c1) (bad))
                          (setf code (logior (ash (logand b0 #x1f) 6) c1))
                          (incf i 2)))
                       ((< b0 #xf0)
                        (let ((c1 (cont (+ i 1))) (c2 (cont (+ i 2))))
                          (when (or (minusp c1) (minusp c2)) (bad))
                          (let ((c (logior (ash (logand b0 #x0f) 12) (ash c1 6) c2)))
                            (when (or (< c #x800) (<= #xd800 c #xdfff)) (bad))
                            (setf code c))
                          (incf i 3)))
                       ((< b0 #xf5)
                        (let ((c1 (cont (+ i 1))) (c2 (cont (+ i 2))) (c3 (cont (+ i 3))))
                          (when (or (minusp c1) (minusp c2) (minusp c3)) (bad))
                          (let ((c (logior (ash (logand b0 #x07) 18) (ash c1 12)
                                           (ash c2 6) c3)))
                            (unless (<= #x10000 c #x10ffff) (bad))
                            (setf code c))
                          (incf i 4)))
                       (t (bad)))
                 (setf (schar s j) (code-char code))
                 (incf j))))
    (subseq s 0 j)))
