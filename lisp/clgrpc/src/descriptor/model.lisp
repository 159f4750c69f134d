;;;; Lisp structures mirroring the parts of google/protobuf/descriptor.proto
;;;; that code generation needs (files, messages, fields, enums, services,
;;;; methods), plus lookups over a set of files.
;;;;
;;;; Field types and labels become keywords (:int32, :repeated, ...);
;;;; type names keep protoc's fully-qualified ".pkg.Msg" spelling.  Options
;;;; are reduced to the two that change the wire format or the API:
;;;; FieldOptions.packed and MessageOptions.map_entry.

(in-package #:clgrpc.descriptor)

(defstruct file-descriptor
  (name "" :type string)
  (package "" :type string)
  (dependencies '() :type list)
  (messages '() :type list)
  (enums '() :type list)
  (services '() :type list)
  (syntax "proto2" :type string)        ; protoc leaves it empty for proto2
  ;; The FileDescriptorProto as the set serialized it: what server reflection sends.
  (octets nil :type (or null octets)))

(defstruct message-descriptor
  (name "" :type string)
  (full-name "" :type string)           ; "pkg.Outer.Inner", no leading dot
  (fields '() :type list)
  (nested-messages '() :type list)
  (enums '() :type list)
  (oneofs '() :type list)               ; oneof names, indexed by oneof_index
  (map-entry-p nil :type boolean)
  (reserved-ranges '() :type list)      ; (start . end-exclusive)
  (reserved-names '() :type list)
  (file nil))                           ; the FILE-DESCRIPTOR it came from

(defstruct field-descriptor
  (name "" :type string)
  (number 0 :type (integer 0 536870911))
  (label :optional :type (member :optional :required :repeated))
  (type nil :type symbol)
  (type-name nil :type (or null string)) ; ".pkg.Msg" for messages and enums
  (json-name nil :type (or null string))
  (oneof-index nil :type (or null (integer 0)))
  (proto3-optional nil :type boolean)
  (default-value nil :type (or null string))
  (packed-option :unset :type (member :unset t nil)))

(defstruct enum-descriptor
  (name "" :type string)
  (full-name "" :type string)
  (values '() :type list))              ; ((name . number) ...) in declaration order

(defstruct service-descriptor
  (name "" :type string)
  (full-name "" :type string)
  (methods '() :type list))

(defstruct method-descriptor
  (name "" :type string)
  (input-type "" :type string)
  (output-type "" :type string)
  (client-streaming-p nil :type boolean)
  (server-streaming-p nil :type boolean)
  (path "" :type string))               ; gRPC ":path": "/pkg.Service/Method"

;;; FieldDescriptorProto.Type numbers -> keywords (index = enum number).
(defparameter *field-types*
  #(nil :double :float :int64 :uint64 :int32 :fixed64 :fixed32 :bool :string
    :group :message :bytes :uint32 :enum :sfixed32 :sfixed64 :sint32 :sint64))

(defparameter *field-labels* #(nil :optional :required :repeated))

(defun field-repeated-p (field)
  (eq (field-descriptor-label field) :repeated))

(defun field-scalar-p (field)
  "Numeric (varint or fixed width) types: the ones that may be packed."
  (not (member (field-descriptor-type field) '(:string :bytes :message :group))))

(defun field-packed-p (field syntax)
  "Whether a repeated FIELD is written packed: the explicit [packed] option
wins; otherwise proto3 packs scalars by default and proto2 does not.
Parsers must accept both encodings regardless."
  (and (field-repeated-p field)
       (field-scalar-p field)
       (let ((opt (field-descriptor-packed-option field)))
         (if (eq opt :unset)
             (string= syntax "proto3")
             opt))))

;;; ------------------------------------------------------------------
;;; Pools: name -> descriptor over a set of files

(defstruct (descriptor-pool (:constructor %make-descriptor-pool))
  (files '() :type list)
  (by-name (make-hash-table :test 'equal) :type hash-table))

(defun pool-files (pool) (descriptor-pool-files pool))

(defun all-messages (file)
  "Every message of FILE, nested ones included, outer before inner."
  (labels ((walk (m) (cons m (mapcan #'walk (copy-list (message-descriptor-nested-messages m))))))
    (mapcan #'walk (copy-list (file-descriptor-messages file)))))

(defun all-enums (file)
  "Every enum of FILE, top level and nested."
  (append (file-descriptor-enums file)
          (mapcan (lambda (m) (copy-list (message-descriptor-enums m))) (all-messages file))))

(defun make-descriptor-pool (files)
  (let ((pool (%make-descriptor-pool :files files)))
    (dolist (file files pool)
      (dolist (m (all-messages file))
        (setf (gethash (message-descriptor-full-name m) (descriptor-pool-by-name pool)) m))
      (dolist (e (all-enums file))
        (setf (gethash (enum-descriptor-full-name e) (descriptor-pool-by-name pool)) e))
      (dolist (s (file-descriptor-services file))
        (setf (gethash (service-descriptor-full-name s) (descriptor-pool-by-name pool)) s)))))

(defun find-descriptor (pool name)
  "Message, enum or service named NAME (\"pkg.Msg\" or protoc's \".pkg.Msg\")."
  (gethash (if (and (plusp (length name)) (char= (char name 0) #\.)) (subseq name 1) name)
           (descriptor-pool-by-name pool)))

(defun field-map-entry (field pool)
  "For a map field, the synthetic *Entry message (fields key=1, value=2); else NIL."
  (and (field-repeated-p field)
       (eq (field-descriptor-type field) :message)
       (let ((m (find-descriptor pool (field-descriptor-type-name field))))
         (and m (message-descriptor-map-entry-p m) m))))
