;;;; HTTP/2 error codes (RFC 9113 section 7) and the condition every
;;;; protocol violation is signalled with.
;;;;
;;;; RFC 9113 section 5.4 distinguishes connection errors (send GOAWAY and
;;;; close) from stream errors (send RST_STREAM, keep the connection); the
;;;; condition carries which one, plus the stream, so the connection loop
;;;; has a single HANDLER-CASE that knows exactly what to send.

(in-package #:clgrpc.http2)

(defconstant +no-error+ #x0)
(defconstant +protocol-error+ #x1)
(defconstant +internal-error+ #x2)
(defconstant +flow-control-error+ #x3)
(defconstant +settings-timeout+ #x4)
(defconstant +stream-closed+ #x5)
(defconstant +frame-size-error+ #x6)
(defconstant +refused-stream+ #x7)
(defconstant +cancel+ #x8)
(defconstant +compression-error+ #x9)
(defconstant +connect-error+ #xa)
(defconstant +enhance-your-calm+ #xb)
(defconstant +inadequate-security+ #xc)
(defconstant +http-1-1-required+ #xd)

(defparameter *error-code-names*
  #("NO_ERROR" "PROTOCOL_ERROR" "INTERNAL_ERROR" "FLOW_CONTROL_ERROR"
    "SETTINGS_TIMEOUT" "STREAM_CLOSED" "FRAME_SIZE_ERROR" "REFUSED_STREAM" "CANCEL"
    "COMPRESSION_ERROR" "CONNECT_ERROR" "ENHANCE_YOUR_CALM" "INADEQUATE_SECURITY"
    "HTTP_1_1_REQUIRED")
  "Names indexed by code, as RFC 9113 section 7 spells them.")

(defun error-code-name (code)
  "The RFC name of CODE.  Unknown codes must not be treated specially
(section 7), so they get a descriptive placeholder rather than an error."
  (if (and (integerp code) (< -1 code (length *error-code-names*)))
      (aref *error-code-names* code)
      (format nil "UNKNOWN_ERROR_0x~X" code)))

(defun error-code-from-name (name)
  (position name *error-code-names* :test #'string-equal))

(define-condition http2-error (error)
  ((code :initarg :code :reader http2-error-code)
   (stream-id :initarg :stream-id :initform 0 :reader http2-error-stream-id)
   (connection-p :initarg :connection-p :initform t :reader http2-error-connection-p)
   (message :initarg :message :initform "" :reader http2-error-message))
  (:report (lambda (c s)
             (format s "HTTP/2 ~:[stream ~D~;connection~*~] error ~A: ~A"
                     (http2-error-connection-p c) (http2-error-stream-id c)
                     (error-code-name (http2-error-code c)) (http2-error-message c))))
  (:documentation "A protocol violation.  CONNECTION-P true: answer with GOAWAY
and close (5.4.1); false: RST_STREAM on STREAM-ID (5.4.2)."))

(defun connection-error (code format-control &rest args)
  (error 'http2-error :code code :stream-id 0 :connection-p t
                      :message (apply #'format nil format-control args)))

(defun stream-error* (stream-id code format-control &rest args)
  "Signal a stream error (named with * because CL:STREAM-ERROR is taken)."
  (error 'http2-error :code code :stream-id stream-id :connection-p nil
                      :message (apply #'format nil format-control args)))
