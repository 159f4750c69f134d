;;;; Requests that are not gRPC: a browser, curl or an HTTP/2 test suite
;;;; pointed at the port.  Such a request is read to its end (its DATA is
;;;; counted for flow control and dropped), then answered with a plain HTTP
;;;; response whose short text body says what this endpoint is: 415 for a
;;;; content-type that is not application/grpc, 405 for a gRPC request whose
;;;; method is not POST.  Answering only after the request ends keeps the
;;;; exchange an ordinary HTTP one, so HTTP/2 conformance suites see every
;;;; state of the stream; the body is sent under flow control like any DATA.

(in-package #:clgrpc.grpc)

(defstruct (plain-request (:constructor make-plain-request (status)))
  "A stream carrying a request that is not gRPC, waiting for its end."
  (status "415" :type string))

(defparameter +plain-response-body+
  (string-to-utf8 (format nil "This is a gRPC server. It answers gRPC requests only: HTTP/2 POST with ~
content-type application/grpc.~%")))

(defun grpc-content-type-p (value)
  "application/grpc, optionally +subtype or ;parameters."
  (and value
       (>= (length value) 16)
       (string-equal "application/grpc" value :end2 16)
       (or (= (length value) 16) (member (char value 16) '(#\+ #\;)))))

(defun non-grpc-status (method content-type)
  "The HTTP status for a request that is not gRPC, or NIL if it is gRPC."
  (cond ((not (grpc-content-type-p content-type)) "415")
        ((not (string= method "POST")) "405")))

(defun %plain-answer (conn stream status)
  "Lock held, on the reactor: answer STATUS with the text body, never
waiting for window (the rest of the body is parked)."
  (clgrpc.http2:stream-write-headers
   conn stream
   (list (cons ":status" status)
         '("content-type" . "text/plain; charset=utf-8")
         (cons "content-length" (princ-to-string (length +plain-response-body+)))))
  (when (eq (clgrpc.http2:stream-write-last-data
             conn stream +plain-response-body+ 0 (length +plain-response-body+)
             (lambda (conn stream) (declare (ignore conn stream)))
             :end-stream t)
            :over-budget)
    (clgrpc.http2:stream-reset conn stream clgrpc.http2:+internal-error+))
  (clgrpc.http2:request-flush conn))

(defun start-plain-request (conn stream status end-stream)
  "A request that is not gRPC: answer now if it has ended, else when it does."
  (if end-stream
      (%plain-answer conn stream status)
      (setf (clgrpc.http2:h2-stream-user stream) (make-plain-request status))))

(defun plain-request-data (conn stream request start end end-stream)
  "DATA of a request that is not gRPC: give its window back, and answer at
its end."
  (clgrpc.http2:stream-return-window conn stream (- end start))
  (when end-stream
    (%plain-answer conn stream (plain-request-status request))))
