;;;; Protobuf wire-format constants and the decode error condition.
;;;;
;;;; Every malformed input (truncation, over-long varint, bad wire type,
;;;; length past the end, invalid UTF-8 in a string) signals
;;;; PROTOBUF-DECODE-ERROR, which the gRPC layer maps to status INTERNAL
;;;; ("failed to parse message") instead of crashing the handler thread.

(in-package #:clgrpc.protobuf)

(define-condition protobuf-decode-error (error)
  ((message :initarg :message :reader protobuf-decode-error-message)
   (position :initarg :position :initform nil :reader protobuf-decode-error-position))
  (:report (lambda (c s)
             (format s "protobuf decode error~@[ at octet ~D~]: ~A"
                     (protobuf-decode-error-position c)
                     (protobuf-decode-error-message c)))))

(defun decode-error (position format-control &rest args)
  (error 'protobuf-decode-error :position position
                                :message (apply #'format nil format-control args)))

;;; Wire types (encoding guide, "Message Structure").
(defconstant +wire-varint+ 0)
(defconstant +wire-fixed64+ 1)
(defconstant +wire-length-delimited+ 2)
(defconstant +wire-start-group+ 3)
(defconstant +wire-end-group+ 4)
(defconstant +wire-fixed32+ 5)

(defconstant +max-field-number+ (1- (ash 1 29)))

(declaim (inline make-tag tag-field-number tag-wire-type))
(defun make-tag (field-number wire-type)
  (declare (type (integer 1 #.(1- (ash 1 29))) field-number) (type (integer 0 5) wire-type))
  (logior (ash field-number 3) wire-type))
(defun tag-field-number (tag) (ash tag -3))
(defun tag-wire-type (tag) (logand tag 7))
