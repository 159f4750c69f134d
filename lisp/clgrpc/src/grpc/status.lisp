;;;; gRPC status codes (doc/statuscodes.md), the GRPC-ERROR condition, the
;;;; percent-encoding of grpc-message, and the mappings from HTTP/2 error
;;;; codes and HTTP statuses that the gRPC over HTTP/2 spec prescribes.

(in-package #:clgrpc.grpc)

(defconstant +ok+ 0)
(defconstant +cancelled+ 1)
(defconstant +unknown+ 2)
(defconstant +invalid-argument+ 3)
(defconstant +deadline-exceeded+ 4)
(defconstant +not-found+ 5)
(defconstant +already-exists+ 6)
(defconstant +permission-denied+ 7)
(defconstant +resource-exhausted+ 8)
(defconstant +failed-precondition+ 9)
(defconstant +aborted+ 10)
(defconstant +out-of-range+ 11)
(defconstant +unimplemented+ 12)
(defconstant +internal+ 13)
(defconstant +unavailable+ 14)
(defconstant +data-loss+ 15)
(defconstant +unauthenticated+ 16)

(defparameter *status-names*
  #("OK" "CANCELLED" "UNKNOWN" "INVALID_ARGUMENT" "DEADLINE_EXCEEDED" "NOT_FOUND"
    "ALREADY_EXISTS" "PERMISSION_DENIED" "RESOURCE_EXHAUSTED" "FAILED_PRECONDITION"
    "ABORTED" "OUT_OF_RANGE" "UNIMPLEMENTED" "INTERNAL" "UNAVAILABLE" "DATA_LOSS"
    "UNAUTHENTICATED"))

;;; grpc-status values as strings, so trailers cons no string per call.
(defparameter *status-strings*
  (coerce (loop for i from 0 to 16 collect (princ-to-string i)) 'simple-vector))

(defun status-string (code)
  "The grpc-status value of CODE; a code past the known ones (an
application may send any) keeps its number."
  (if (and (integerp code) (< -1 code (length *status-strings*)))
      (svref *status-strings* code)
      (princ-to-string code)))

(defun status-code-name (code)
  (if (and (integerp code) (< -1 code (length *status-names*)))
      (svref *status-names* code)
      (format nil "CODE_~D" code)))

(define-condition grpc-error (error)
  ((code :initarg :code :initform +unknown+ :reader grpc-error-code)
   (message :initarg :message :initform "" :reader grpc-error-message)
   (metadata :initarg :metadata :initform '() :reader grpc-error-metadata)
   ;; A rich error's details, STATUS-DETAIL structures (status-details.lisp).
   (details :initarg :details :initform '() :reader grpc-error-details))
  (:report (lambda (c s)
             (format s "gRPC ~A~@[: ~A~]" (status-code-name (grpc-error-code c))
                     (let ((m (grpc-error-message c))) (and (plusp (length m)) m)))))
  (:documentation "A call ended with a non-OK status.  Handlers signal it to
answer with CODE and MESSAGE (and METADATA as trailers, and DETAILS, a
list of STATUS-DETAIL, as google.rpc.Status in grpc-status-details-bin);
clients receive it for every failed call, with the details the server
sent."))

(defun raise-grpc-error (code format-control &rest args)
  (error 'grpc-error :code code :message (apply #'format nil format-control args)))

;;; ------------------------------------------------------------------
;;; grpc-message: percent-encoded UTF-8 (PROTOCOL-HTTP2.md, "Responses")

(defun percent-encode-message (string)
  "Octets 0x20-0x7E other than % pass through; everything else becomes %XX
of its UTF-8 encoding."
  (if (every (lambda (c) (and (<= #x20 (char-code c) #x7e) (char/= c #\%))) string)
      string
      (with-output-to-string (out)
        (loop for b across (string-to-utf8 string)
              do (if (and (<= #x20 b #x7e) (/= b #.(char-code #\%)))
                     (write-char (code-char b) out)
                     (format out "%~2,'0X" b))))))

(defun percent-decode-message (string)
  "Inverse of PERCENT-ENCODE-MESSAGE.  Malformed escapes are kept as they
are and invalid UTF-8 is replaced, since a status message must never make
the call fail differently."
  (if (not (find #\% string))
      string
      (let ((octets (make-array (length string) :element-type '(unsigned-byte 8)
                                                :fill-pointer 0)))
        (loop with i = 0
              while (< i (length string))
              do (let ((c (char string i)))
                   (if (and (char= c #\%) (<= (+ i 3) (length string))
                            (digit-char-p (char string (+ i 1)) 16)
                            (digit-char-p (char string (+ i 2)) 16))
                       (progn (vector-push (parse-integer string :start (+ i 1) :end (+ i 3)
                                                                 :radix 16)
                                           octets)
                              (incf i 3))
                       (progn (vector-push (logand (char-code c) #xff) octets)
                              (incf i)))))
        (let ((v (coerce octets 'octets)))
          (handler-case (utf8-to-string v)
            (utf8-decoding-error () (octets-to-latin1 v)))))))

;;; ------------------------------------------------------------------
;;; Mappings

(defun status-from-http2-error (code)
  "gRPC status for a stream reset with HTTP/2 error CODE (PROTOCOL-HTTP2.md,
\"Errors\")."
  (case code
    (#.clgrpc.http2:+refused-stream+ +unavailable+)
    (#.clgrpc.http2:+cancel+ +cancelled+)
    (#.clgrpc.http2:+enhance-your-calm+ +resource-exhausted+)
    (#.clgrpc.http2:+inadequate-security+ +permission-denied+)
    (t +internal+)))

(defun status-from-http-status (status)
  "gRPC status for a response whose :status is not 200 (doc/http-grpc-status-mapping.md)."
  (case status
    (400 +internal+)
    (401 +unauthenticated+)
    (403 +permission-denied+)
    (404 +unimplemented+)
    ((429 502 503 504) +unavailable+)
    (t +unknown+)))
