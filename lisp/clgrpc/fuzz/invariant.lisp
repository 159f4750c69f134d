;;;; Checks a target makes on what a decoder returned.  A broken one is a
;;;; finding like a crash: the decoder accepted input and produced state or
;;;; output that its own contract rules out.

(in-package #:clgrpc.fuzz)

(define-condition invariant-violation (error)
  ((message :initarg :message :reader invariant-violation-message))
  (:report (lambda (c s) (format s "invariant violated: ~A" (invariant-violation-message c)))))

(defun check (ok format-control &rest args)
  (unless ok
    (error 'invariant-violation :message (apply #'format nil format-control args))))

(defun octets-from (&rest parts)
  "An octet vector from integers (one octet each), strings (Latin-1) and
octet vectors, in order: for writing seeds and tokens readably."
  (let ((buf (make-obuf 64)))
    (dolist (p parts (obuf-contents buf))
      (etypecase p
        (integer (obuf-write-u8 buf p))
        (string (obuf-write-latin1 buf p))
        (vector (obuf-write-bytes buf (coerce p 'octets)))))))

(defmacro with-obuf-contents ((buf) &body body)
  "Run BODY with BUF bound to a fresh OBUF; return what BODY wrote into it."
  `(let ((,buf (make-obuf 256)))
     ,@body
     (obuf-contents ,buf)))
