;;;; Decoding a binary google.protobuf.FileDescriptorSet with the wire-format
;;;; readers, hand-written against descriptor.proto (we cannot generate code
;;;; for descriptor.proto before we can read descriptors: bootstrap).
;;;;
;;;; Field numbers below are those of descriptor.proto.  Unknown fields
;;;; (options we ignore, source info, editions features) are skipped.  A
;;;; wrong wire type for a known field is a PROTOBUF-DECODE-ERROR, like any
;;;; other malformed input.  Not a hot path: clarity over speed.

(in-package #:clgrpc.descriptor)

(defun expect-wire (wire expected field)
  (unless (= wire expected)
    (error 'protobuf-decode-error
           :message (format nil "field ~D has wire type ~D, expected ~D" field wire expected))))

(defmacro do-fields ((octets start end) &body clauses)
  "Loop over the fields of the message OCTETS[START,END).  CLAUSES are CASE
clauses on the field number; inside them (STR), (INT), (BOOL) and
(SUB function) read the current field's value (checking its wire type), SUB
calling FUNCTION on the (octets start end) of an embedded message.
Fields without a clause are skipped."
  (let ((o (gensym "OCTETS")) (pos (gensym "POS")) (e (gensym "END"))
        (field (gensym "FIELD")) (wire (gensym "WIRE")))
    `(let ((,o ,octets) (,pos ,start) (,e ,end))
       (loop while (< ,pos ,e)
             do (multiple-value-bind (,field ,wire p) (read-tag ,o ,pos ,e)
                  (setf ,pos p)
                  (flet ((str ()
                           (expect-wire ,wire +wire-length-delimited+ ,field)
                           (multiple-value-bind (v p) (read-utf8-string ,o ,pos ,e)
                             (setf ,pos p) v))
                         (int ()
                           (expect-wire ,wire +wire-varint+ ,field)
                           (multiple-value-bind (v p) (read-int32 ,o ,pos ,e)
                             (setf ,pos p) v))
                         (bool ()
                           (expect-wire ,wire +wire-varint+ ,field)
                           (multiple-value-bind (v p) (read-bool ,o ,pos ,e)
                             (setf ,pos p) v))
                         (sub (fn)
                           (expect-wire ,wire +wire-length-delimited+ ,field)
                           (multiple-value-bind (s2 e2 p) (read-length-delimited ,o ,pos ,e)
                             (setf ,pos p)
                             (funcall fn ,o s2 e2))))
                    (declare (ignorable #'str #'int #'bool #'sub))
                    (case ,field
                      ,@clauses
                      (t (setf ,pos (skip-field ,o ,pos ,e ,wire ,field))))))))))

(defun table-ref (table index what)
  (or (and (< 0 index (length table)) (aref table index))
      (error 'protobuf-decode-error :message (format nil "unknown ~A ~D" what index))))

(defun in-range (value low high what)
  "VALUE if within [LOW, HIGH], else a decode error (not a later TYPE-ERROR)."
  (if (<= low value high)
      value
      (error 'protobuf-decode-error :message (format nil "~A ~D out of range" what value))))

(defun decode-field (octets start end)
  (let ((f (make-field-descriptor)))
    (do-fields (octets start end)
      (1 (setf (field-descriptor-name f) (str)))
      (3 (setf (field-descriptor-number f) (in-range (int) 0 +max-field-number+ "field number")))
      (4 (setf (field-descriptor-label f) (table-ref *field-labels* (int) "label")))
      (5 (setf (field-descriptor-type f) (table-ref *field-types* (int) "field type")))
      (6 (setf (field-descriptor-type-name f) (str)))
      (7 (setf (field-descriptor-default-value f) (str)))
      (8 (sub (lambda (o s e)             ; FieldOptions
                (do-fields (o s e)
                  (2 (setf (field-descriptor-packed-option f) (bool)))))))
      (9 (setf (field-descriptor-oneof-index f) (in-range (int) 0 (1- (ash 1 31)) "oneof index")))
      (10 (setf (field-descriptor-json-name f) (str)))
      (17 (setf (field-descriptor-proto3-optional f) (bool))))
    f))

(defun decode-enum (octets start end)
  (let ((en (make-enum-descriptor)) (values '()))
    (do-fields (octets start end)
      (1 (setf (enum-descriptor-name en) (str)))
      (2 (push (sub (lambda (o s e)
                      (let ((name "") (number 0))
                        (do-fields (o s e)
                          (1 (setf name (str)))
                          (2 (setf number (int))))
                        (cons name number))))
               values)))
    (setf (enum-descriptor-values en) (nreverse values))
    en))

(defun decode-descriptor-proto (octets start end)
  (let ((m (make-message-descriptor))
        (fields '()) (nested '()) (enums '()) (oneofs '()) (ranges '()) (reserved '()))
    (do-fields (octets start end)
      (1 (setf (message-descriptor-name m) (str)))
      (2 (push (sub #'decode-field) fields))
      (3 (push (sub #'decode-descriptor-proto) nested))
      (4 (push (sub #'decode-enum) enums))
      (7 (sub (lambda (o s e)             ; MessageOptions
                (do-fields (o s e)
                  (7 (setf (message-descriptor-map-entry-p m) (bool)))))))
      (8 (push (sub (lambda (o s e)
                      (let ((name ""))
                        (do-fields (o s e) (1 (setf name (str))))
                        name)))
               oneofs))
      (9 (push (sub (lambda (o s e)
                      (let ((lo 0) (hi 0))
                        (do-fields (o s e) (1 (setf lo (int))) (2 (setf hi (int))))
                        (cons lo hi))))
               ranges))
      (10 (push (str) reserved)))
    (setf (message-descriptor-fields m) (nreverse fields)
          (message-descriptor-nested-messages m) (nreverse nested)
          (message-descriptor-enums m) (nreverse enums)
          (message-descriptor-oneofs m) (nreverse oneofs)
          (message-descriptor-reserved-ranges m) (nreverse ranges)
          (message-descriptor-reserved-names m) (nreverse reserved))
    m))

(defun decode-method (octets start end)
  (let ((md (make-method-descriptor)))
    (do-fields (octets start end)
      (1 (setf (method-descriptor-name md) (str)))
      (2 (setf (method-descriptor-input-type md) (str)))
      (3 (setf (method-descriptor-output-type md) (str)))
      (5 (setf (method-descriptor-client-streaming-p md) (bool)))
      (6 (setf (method-descriptor-server-streaming-p md) (bool))))
    md))

(defun decode-service (octets start end)
  (let ((sd (make-service-descriptor)) (methods '()))
    (do-fields (octets start end)
      (1 (setf (service-descriptor-name sd) (str)))
      (2 (push (sub #'decode-method) methods)))
    (setf (service-descriptor-methods sd) (nreverse methods))
    sd))

(defun qualify (scope name)
  (if (string= scope "") name (concatenate 'string scope "." name)))

(defun assign-full-names (file)
  "Full names depend on the package and nesting, which may be decoded in any
order, so they are filled in once the whole file is read."
  (let ((pkg (file-descriptor-package file)))
    (labels ((walk-message (m scope)
               (let ((full (qualify scope (message-descriptor-name m))))
                 (setf (message-descriptor-full-name m) full
                       (message-descriptor-file m) file)
                 (dolist (e (message-descriptor-enums m))
                   (setf (enum-descriptor-full-name e) (qualify full (enum-descriptor-name e))))
                 (dolist (n (message-descriptor-nested-messages m))
                   (walk-message n full)))))
      (dolist (m (file-descriptor-messages file)) (walk-message m pkg))
      (dolist (e (file-descriptor-enums file))
        (setf (enum-descriptor-full-name e) (qualify pkg (enum-descriptor-name e))))
      (dolist (s (file-descriptor-services file))
        (let ((full (qualify pkg (service-descriptor-name s))))
          (setf (service-descriptor-full-name s) full)
          (dolist (md (service-descriptor-methods s))
            (setf (method-descriptor-path md)
                  (concatenate 'string "/" full "/" (method-descriptor-name md)))))))
    file))

(defun decode-file (octets start end)
  (let ((file (make-file-descriptor))
        (deps '()) (messages '()) (enums '()) (services '()))
    (do-fields (octets start end)
      (1 (setf (file-descriptor-name file) (str)))
      (2 (setf (file-descriptor-package file) (str)))
      (3 (push (str) deps))
      (4 (push (sub #'decode-descriptor-proto) messages))
      (5 (push (sub #'decode-enum) enums))
      (6 (push (sub #'decode-service) services))
      (12 (let ((syntax (str)))
            (setf (file-descriptor-syntax file) (if (string= syntax "") "proto2" syntax)))))
    (setf (file-descriptor-dependencies file) (nreverse deps)
          (file-descriptor-octets file) (subseq octets start end)
          (file-descriptor-messages file) (nreverse messages)
          (file-descriptor-enums file) (nreverse enums)
          (file-descriptor-services file) (nreverse services))
    (assign-full-names file)))

(defun read-file-descriptor-set (octets &key (start 0) (end (length octets)))
  "Decode a serialized FileDescriptorSet; returns its FILE-DESCRIPTORs in
order (with --include_imports, dependencies come before their users)."
  (let ((files '()))
    (do-fields (octets start end)
      (1 (push (sub #'decode-file) files)))
    (nreverse files)))

(defun read-file-descriptor (octets)
  "Decode one serialized FileDescriptorProto."
  (decode-file octets 0 (length octets)))

(defun load-file-descriptor-set (pathname)
  "Read the descriptor set file at PATHNAME (e.g. protoc --descriptor_set_out)."
  (with-open-file (in pathname :element-type '(unsigned-byte 8))
    (let ((octets (make-octets (file-length in))))
      (read-sequence octets in)
      (read-file-descriptor-set octets))))
