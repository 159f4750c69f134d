;;;; Custom metadata: ASCII values, and binary values under names ending in
;;;; "-bin", base64-encoded on the wire (PROTOCOL-HTTP2.md, "Custom-Metadata").
;;;; Received binary values accept padded and unpadded base64, as the spec
;;;; requires; we send them unpadded.
;;;;
;;;; Metadata is an alist of (name . value): NAME lower-case, VALUE a string,
;;;; or octets for -bin names.  Reserved headers (pseudo-headers, grpc-*,
;;;; content-type, te) are the library's, never the application's.

(in-package #:clgrpc.grpc)

(defparameter +base64-chars+
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")

(defparameter +base64-values+
  (let ((v (make-array 256 :element-type '(signed-byte 8) :initial-element -1)))
    (dotimes (i 64 v)
      (setf (aref v (char-code (char +base64-chars+ i))) i))))

(defun base64-encode (octets &key (pad nil))
  (declare (type octets octets))
  (let ((n (length octets)))
    (with-output-to-string (out)
      (loop for i from 0 below n by 3
            do (let* ((b0 (aref octets i))
                      (b1 (if (< (+ i 1) n) (aref octets (+ i 1)) 0))
                      (b2 (if (< (+ i 2) n) (aref octets (+ i 2)) 0))
                      (word (logior (ash b0 16) (ash b1 8) b2))
                      (chars (1+ (min 3 (- n i)))))
                 (dotimes (k 4)
                   (cond ((< k chars)
                          (write-char (char +base64-chars+ (ldb (byte 6 (- 18 (* 6 k))) word)) out))
                         (pad (write-char #\= out)))))))))

(defun base64-decode (string)
  "Octets of STRING (standard alphabet, padding optional).  NIL if malformed."
  (let* ((end (length (string-right-trim "=" string)))
         (out (make-array (floor (* end 3) 4) :element-type '(unsigned-byte 8)))
         (word 0) (bits 0) (j 0))
    (when (= 1 (mod end 4))
      (return-from base64-decode nil))
    (dotimes (i end)
      (let ((v (let ((code (char-code (char string i))))
                 (if (< code 256) (aref +base64-values+ code) -1))))
        (when (minusp v)
          (return-from base64-decode nil))
        (setf word (logior (ash (logand word #xffff) 6) v))
        (incf bits 6)
        (when (>= bits 8)
          (decf bits 8)
          (setf (aref out j) (ldb (byte 8 bits) word))
          (incf j))))
    out))

(defun binary-header-p (name)
  (declare (type simple-string name))
  (let ((n (length name)))
    (and (> n 4) (string= name "-bin" :start1 (- n 4)))))

(defparameter *application-grpc-headers* '("grpc-previous-rpc-attempts" "grpc-retry-pushback-ms")
  "The grpc- headers that belong to the application: the attempt count a
server's handler reads, and the pushback its trailers may carry (gRFC A6).")

(defun reserved-header-p (name)
  (declare (type simple-string name))
  (or (zerop (length name))
      (char= (char name 0) #\:)
      (and (> (length name) 5) (string= name "grpc-" :end1 5)
           (not (member name *application-grpc-headers* :test #'string=)))
      (string= name "content-type")
      (string= name "te")))

(defun headers-to-metadata (headers)
  "The application's metadata from a received header block.  A -bin value
that is not valid base64 is dropped (the spec says to treat the header as
absent rather than fail the call)."
  (let ((result '()))
    (dolist (h headers (nreverse result))
      (let ((name (car h)))
        (unless (reserved-header-p name)
          (if (binary-header-p name)
              (let ((octets (base64-decode (cdr h))))
                (when octets
                  (push (cons name octets) result)))
              (push (cons name (cdr h)) result)))))))

(defun metadata-to-headers (metadata)
  "Header entries for METADATA, checked: names must be lower-case token
characters and not reserved; ASCII values printable.  Signals GRPC-ERROR
INTERNAL otherwise (the call never starts with broken metadata)."
  (loop for (name . value) in metadata
        collect (let ((name (string-downcase (string name))))
                  (when (or (reserved-header-p name)
                            (notevery (lambda (c) (or (alphanumericp c) (find c "-_."))) name))
                    (raise-grpc-error +internal+ "invalid metadata name ~S" name))
                  (if (binary-header-p name)
                      (cons name (base64-encode (coerce value 'octets)))
                      (let ((value (string value)))
                        (unless (every (lambda (c) (<= #x20 (char-code c) #x7e)) value)
                          (raise-grpc-error +internal+ "metadata ~A: value not printable ASCII"
                                            name))
                        (cons name value))))))
