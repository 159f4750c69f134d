;;;; grpc-timeout (PROTOCOL-HTTP2.md): at most 8 ASCII digits and a unit,
;;;; H M S m u n.  Deadlines are kept in microseconds; nanoseconds round up
;;;; so a timeout never becomes zero by accident.

(in-package #:clgrpc.grpc)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defun parse-grpc-timeout (string)
  "Microseconds for a grpc-timeout value, or NIL if malformed."
  (declare (type simple-string string))
  (let ((n (length string)))
    (when (<= 2 n 9)
      (let ((value 0))
        (declare (type fixnum value))
        (dotimes (i (1- n))
          (let ((d (digit-char-p (char string i))))
            (unless d (return-from parse-grpc-timeout nil))
            (setf value (+ (* value 10) d))))
        (case (char string (1- n))
          (#\H (* value 3600000000))
          (#\M (* value 60000000))
          (#\S (* value 1000000))
          (#\m (* value 1000))
          (#\u value)
          (#\n (ceiling value 1000))
          (t nil))))))

(defun format-grpc-timeout (microseconds)
  "The grpc-timeout value for MICROSECONDS (at least 1u): the finest unit
whose value fits in 8 digits, rounded up so the peer never sees a shorter
timeout than ours."
  (declare (type fixnum microseconds))
  (let ((us (max 1 microseconds)))
    (flet ((fits (v) (< v 100000000)))
      (cond ((fits us) (format nil "~Du" us))
            ((fits (ceiling us 1000)) (format nil "~Dm" (ceiling us 1000)))
            ((fits (ceiling us 1000000)) (format nil "~DS" (ceiling us 1000000)))
            ((fits (ceiling us 60000000)) (format nil "~DM" (ceiling us 60000000)))
            (t (format nil "~DH" (min 99999999 (ceiling us 3600000000))))))))
