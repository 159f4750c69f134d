;;;; Rich errors: google.rpc.Status in the grpc-status-details-bin trailer,
;;;; as grpc-go's status.WithDetails sends it and status.FromError reads
;;;; it.  A status is (code, message, details), each detail a
;;;; google.protobuf.Any: the type URL of a message
;;;; ("type.googleapis.com/google.rpc.BadRequest") and that message's
;;;; octets, which the application encodes and decodes with its own
;;;; generated code.
;;;;
;;;;   message Status { int32 code = 1; string message = 2; repeated Any details = 3; }
;;;;   message Any { string type_url = 1; bytes value = 2; }

(in-package #:clgrpc.grpc)

(defstruct (status-detail (:constructor make-status-detail (type-url value)))
  "One detail of a rich error: a google.protobuf.Any."
  (type-url "" :type string)
  (value (make-octets 0) :type octets))

(defun %encode-any (detail)
  (let ((buf (make-obuf 64)))
    (clgrpc.protobuf:write-tag buf 1 clgrpc.protobuf:+wire-length-delimited+)
    (clgrpc.protobuf:write-utf8-string buf (status-detail-type-url detail))
    (clgrpc.protobuf:write-tag buf 2 clgrpc.protobuf:+wire-length-delimited+)
    (clgrpc.protobuf:write-bytes buf (status-detail-value detail))
    (subseq (obuf-data buf) 0 (obuf-fill buf))))

(defun encode-rpc-status (code message details)
  "The octets of google.rpc.Status {CODE, MESSAGE, DETAILS}."
  (let ((buf (make-obuf 128)))
    (unless (zerop code)
      (clgrpc.protobuf:write-tag buf 1 clgrpc.protobuf:+wire-varint+)
      (clgrpc.protobuf:write-int32 buf code))
    (when (plusp (length message))
      (clgrpc.protobuf:write-tag buf 2 clgrpc.protobuf:+wire-length-delimited+)
      (clgrpc.protobuf:write-utf8-string buf message))
    (dolist (detail details)
      (clgrpc.protobuf:write-tag buf 3 clgrpc.protobuf:+wire-length-delimited+)
      (clgrpc.protobuf:write-bytes buf (%encode-any detail)))
    (subseq (obuf-data buf) 0 (obuf-fill buf))))

(defun %decode-any (octets start end)
  (let ((type-url "") (value (make-octets 0)) (pos start))
    (loop while (< pos end)
          do (multiple-value-bind (field wire-type p) (clgrpc.protobuf:read-tag octets pos end)
               (setf pos (cond ((and (= field 1) (= wire-type clgrpc.protobuf:+wire-length-delimited+))
                                (multiple-value-bind (s next) (clgrpc.protobuf:read-utf8-string octets p end)
                                  (setf type-url s)
                                  next))
                               ((and (= field 2) (= wire-type clgrpc.protobuf:+wire-length-delimited+))
                                (multiple-value-bind (v next) (clgrpc.protobuf:read-bytes octets p end)
                                  (setf value v)
                                  next))
                               (t (clgrpc.protobuf:skip-field octets p end wire-type field))))))
    (make-status-detail type-url value)))

(defun decode-rpc-status (octets)
  "(values code message details) of google.rpc.Status OCTETS; signals
CLGRPC.PROTOBUF:PROTOBUF-DECODE-ERROR if they are not one."
  (let ((code 0) (message "") (details '()) (pos 0) (end (length octets)))
    (loop while (< pos end)
          do (multiple-value-bind (field wire-type p) (clgrpc.protobuf:read-tag octets pos end)
               (setf pos (cond ((and (= field 1) (= wire-type clgrpc.protobuf:+wire-varint+))
                                (multiple-value-bind (v next) (clgrpc.protobuf:read-int32 octets p end)
                                  (setf code v)
                                  next))
                               ((and (= field 2) (= wire-type clgrpc.protobuf:+wire-length-delimited+))
                                (multiple-value-bind (s next) (clgrpc.protobuf:read-utf8-string octets p end)
                                  (setf message s)
                                  next))
                               ((and (= field 3) (= wire-type clgrpc.protobuf:+wire-length-delimited+))
                                (multiple-value-bind (s e next) (clgrpc.protobuf:read-length-delimited octets p end)
                                  (push (%decode-any octets s e) details)
                                  next))
                               (t (clgrpc.protobuf:skip-field octets p end wire-type field))))))
    (values code message (nreverse details))))

(defun status-details-header (code message details)
  "The grpc-status-details-bin trailer of a status with DETAILS, or NIL."
  (and details
       (cons "grpc-status-details-bin" (base64-encode (encode-rpc-status code message details)))))

(defun status-details-from-trailers (headers)
  "The details a server sent in grpc-status-details-bin among HEADERS, or
NIL (none, or not a google.rpc.Status: the status stays as grpc-status
says, as grpc-go has it)."
  (let* ((value (cdr (assoc "grpc-status-details-bin" headers :test #'string=)))
         (octets (and value (base64-decode value))))
    (and octets
         (handler-case (nth-value 2 (decode-rpc-status octets))
           (error () nil)))))
