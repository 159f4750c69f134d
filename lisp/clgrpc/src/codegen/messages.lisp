;;;; Message definitions from a FileDescriptorSet: for every message a
;;;; DEFSTRUCT with typed slots, an encoder ENCODE-<name> (message obuf)
;;;; writing the wire format in field-number order, a decoder
;;;; DECODE-<name> (octets &optional start end), and methods on the generic
;;;; ENCODE-MESSAGE / DECODE-MESSAGE; for every enum, conversions between
;;;; keywords and numbers.  The encoder and decoder have the signatures the
;;;; gRPC layer takes as codecs.
;;;;
;;;; Representation:
;;;;   scalars       Lisp integers, T/NIL, single- and double-floats
;;;;   string        string (UTF-8 on the wire, strictly decoded)
;;;;   bytes         (unsigned-byte 8) vector
;;;;   enum          keyword (an unknown number decodes to the integer)
;;;;   message       the struct, or NIL when absent
;;;;   repeated      list; map<K,V> is a list of (key . value)
;;;;   presence      proto3 plain fields hold their default and are not
;;;;                 written when equal to it; proto3 `optional`, oneof
;;;;                 members and proto2 fields are NIL when absent
;;;;   unknown       fields kept as raw octets and written back after the known
;;;;                 ones
;;;;
;;;; Not supported: groups (skipped as unknown fields), proto2 custom default
;;;; values (absent fields are NIL), extensions.  A repeated singular message
;;;; field decodes last-one-wins instead of merging.

(in-package #:clgrpc.codegen)

(defstruct (gen (:constructor %make-gen))
  (package *package*)
  (pool nil)
  (names (make-hash-table :test 'equal))    ; full name -> base name string
  (syntax (make-hash-table :test 'equal)))  ; message full name -> "proto2"/"proto3"

(defun make-gen (files package)
  (let ((gen (%make-gen :package (or (find-package package) (error "no package ~S" package))
                        :pool (make-descriptor-pool files))))
    (dolist (file files gen)
      (let ((pkg (file-descriptor-package file)))
        (dolist (m (all-messages file))
          (setf (gethash (message-descriptor-full-name m) (gen-names gen))
                (type-base-name (message-descriptor-full-name m) pkg)
                (gethash (message-descriptor-full-name m) (gen-syntax gen))
                (file-descriptor-syntax file)))
        (dolist (e (all-enums file))
          (setf (gethash (enum-descriptor-full-name e) (gen-names gen))
                (type-base-name (enum-descriptor-full-name e) pkg)))))))

(defun sym (gen &rest parts)
  (intern (format nil "~{~A~}" parts) (gen-package gen)))

(defun base-name (gen full-name)
  (or (gethash (strip-dot full-name) (gen-names gen))
      (error "type ~A is not in the descriptor set (use protoc --include_imports)" full-name)))

(defun message-symbol (gen full-name) (sym gen (base-name gen full-name)))
(defun encoder-symbol (gen full-name) (sym gen "ENCODE-" (base-name gen full-name)))
(defun decoder-symbol (gen full-name) (sym gen "DECODE-" (base-name gen full-name)))
(defun enum-value-symbol (gen full-name) (sym gen (base-name gen full-name) "-VALUE"))
(defun enum-keyword-symbol (gen full-name) (sym gen (base-name gen full-name) "-KEYWORD"))

;;; ------------------------------------------------------------------
;;; Per-type facts

(defun wire-type (type)
  (ecase type
    ((:int32 :int64 :uint32 :uint64 :sint32 :sint64 :bool :enum) +wire-varint+)
    ((:fixed64 :sfixed64 :double) +wire-fixed64+)
    ((:fixed32 :sfixed32 :float) +wire-fixed32+)
    ((:string :bytes :message) +wire-length-delimited+)))

(defun scalar-lisp-type (type)
  (ecase type
    ((:int32 :sint32 :sfixed32) '(signed-byte 32))
    ((:int64 :sint64 :sfixed64) '(signed-byte 64))
    ((:uint32 :fixed32) '(unsigned-byte 32))
    ((:uint64 :fixed64) '(unsigned-byte 64))
    (:bool 'boolean)
    (:float 'single-float)
    (:double 'double-float)
    (:string 'string)
    (:bytes '(simple-array (unsigned-byte 8) (*)))
    (:enum '(or keyword (signed-byte 32)))))

(defun first-enum-keyword (gen field)
  (let ((enum (find-descriptor (gen-pool gen) (field-descriptor-type-name field))))
    (intern (lisp-name (car (first (enum-descriptor-values enum)))) :keyword)))

(defun scalar-default (gen field)
  (ecase (field-descriptor-type field)
    ((:int32 :sint32 :sfixed32 :int64 :sint64 :sfixed64 :uint32 :fixed32 :uint64 :fixed64) 0)
    (:bool nil)
    (:float 0f0)
    (:double 0d0)
    (:string "")
    (:bytes '(load-time-value (make-octets 0) t))
    (:enum (first-enum-keyword gen field))))

(defun default-test (type v)
  "A form true when V is TYPE's default (proto3 does not write those)."
  (ecase type
    ((:int32 :sint32 :sfixed32 :int64 :sint64 :sfixed64 :uint32 :fixed32 :uint64 :fixed64)
     `(zerop ,v))
    (:bool `(not ,v))
    ;; -0.0 is not the default: compare bit patterns like the reference
    ;; implementations.
    (:float `(zerop (sb-kernel:single-float-bits ,v)))
    (:double `(and (zerop (sb-kernel:double-float-low-bits ,v))
                   (zerop (sb-kernel:double-float-high-bits ,v))))
    ((:string :bytes) `(zerop (length ,v)))
    (:enum nil)))                       ; handled with the enum's number

;;; ------------------------------------------------------------------
;;; Fields

(defstruct (finfo (:constructor %make-finfo))
  desc number type slot accessor repeated packed map-entry presence oneof)

(defun field-infos (gen message)
  (let* ((name (base-name gen (message-descriptor-full-name message)))
         (syntax (gethash (message-descriptor-full-name message) (gen-syntax gen))))
    (loop for f in (sort (copy-list (message-descriptor-fields message)) #'<
                         :key #'field-descriptor-number)
          unless (eq (field-descriptor-type f) :group)
            collect (let* ((map-entry (field-map-entry f (gen-pool gen)))
                           (repeated (field-repeated-p f))
                           (slot (lisp-name (field-descriptor-name f))))
                      (%make-finfo
                       :desc f :number (field-descriptor-number f)
                       :type (field-descriptor-type f)
                       :slot (sym gen slot)
                       :accessor (sym gen name "-" slot)
                       :repeated repeated
                       :packed (field-packed-p f syntax)
                       :map-entry map-entry
                       :oneof (field-descriptor-oneof-index f)
                       :presence (cond (repeated :none)
                                       ((eq (field-descriptor-type f) :message) :explicit)
                                       ((string/= syntax "proto3") :explicit)
                                       ((or (field-descriptor-proto3-optional f)
                                            (field-descriptor-oneof-index f))
                                        :explicit)
                                       (t :implicit)))))))

(defun slot-spec (gen fi defined)
  "DEFINED: message symbols whose structs precede this one; a field of a
type not yet defined (a cycle) is typed STRUCTURE-OBJECT rather than refer
to an undefined type."
  (let ((f (finfo-desc fi)))
    (cond ((finfo-repeated fi) `(,(finfo-slot fi) nil :type list))
          ((eq (finfo-type fi) :message)
           (let ((type (message-symbol gen (field-descriptor-type-name f))))
             `(,(finfo-slot fi) nil
               :type (or null ,(if (member type defined) type 'structure-object)))))
          ((eq (finfo-presence fi) :explicit)
           `(,(finfo-slot fi) nil :type (or null ,(scalar-lisp-type (finfo-type fi)))))
          (t `(,(finfo-slot fi) ,(scalar-default gen f)
               :type ,(scalar-lisp-type (finfo-type fi)))))))

;;; Writing one value (no tag) of FIELD's type held in V.
(defun write-value-form (gen field v)
  (let ((type (field-descriptor-type field)))
    (ecase type
      (:int32 `(write-int32 buf ,v))
      (:int64 `(write-int64 buf ,v))
      (:uint32 `(write-uint32 buf ,v))
      (:uint64 `(write-uint64 buf ,v))
      (:sint32 `(write-sint32 buf ,v))
      (:sint64 `(write-sint64 buf ,v))
      (:bool `(write-bool buf ,v))
      (:enum `(write-enum buf (,(enum-value-symbol gen (field-descriptor-type-name field)) ,v)))
      (:fixed32 `(write-fixed32 buf ,v))
      (:fixed64 `(write-fixed64 buf ,v))
      (:sfixed32 `(write-sfixed32 buf ,v))
      (:sfixed64 `(write-sfixed64 buf ,v))
      (:float `(write-float buf ,v))
      (:double `(write-double buf ,v))
      (:string `(write-utf8-string buf ,v))
      (:bytes `(write-bytes buf ,v))
      (:message `(let ((start (begin-length-prefix buf)))
                   (,(encoder-symbol gen (field-descriptor-type-name field)) ,v buf)
                   (end-length-prefix buf start))))))

;;; Reading one value of FIELD's type at P: a form returning (values v next).
(defun read-value-form (gen field)
  (let ((type (field-descriptor-type field)))
    (ecase type
      (:int32 '(read-int32 octets p end))
      (:int64 '(read-int64 octets p end))
      (:uint32 '(read-uint32 octets p end))
      (:uint64 '(read-uint64 octets p end))
      (:sint32 '(read-sint32 octets p end))
      (:sint64 '(read-sint64 octets p end))
      (:bool '(read-bool octets p end))
      (:enum `(multiple-value-bind (n p2) (read-enum octets p end)
                (values (,(enum-keyword-symbol gen (field-descriptor-type-name field)) n) p2)))
      (:fixed32 '(read-fixed32 octets p end))
      (:fixed64 '(read-fixed64 octets p end))
      (:sfixed32 '(read-sfixed32 octets p end))
      (:sfixed64 '(read-sfixed64 octets p end))
      (:float '(read-float octets p end))
      (:double '(read-double octets p end))
      (:string '(read-utf8-string octets p end))
      (:bytes '(read-bytes octets p end))
      (:message `(multiple-value-bind (s e p2) (read-length-delimited octets p end)
                   (values (,(decoder-symbol gen (field-descriptor-type-name field))
                            octets s e (1+ depth))
                           p2))))))

(defun packed-kind (type)
  (and (member type '(:int32 :int64 :uint32 :uint64 :sint32 :sint64 :bool :enum
                      :fixed32 :fixed64 :sfixed32 :sfixed64 :float :double))
       type))

(defun map-entry-fields (entry)
  (let ((fields (message-descriptor-fields entry)))
    (values (find 1 fields :key #'field-descriptor-number)
            (find 2 fields :key #'field-descriptor-number))))

(defun write-field-form (gen fi)
  "Code writing field FI of message M (tag and value)."
  (let* ((f (finfo-desc fi))
         (type (finfo-type fi))
         (n (finfo-number fi))
         (acc `(,(finfo-accessor fi) m)))
    (cond
      ((finfo-map-entry fi)
       (multiple-value-bind (kf vf) (map-entry-fields (finfo-map-entry fi))
         `(dolist (entry ,acc)
            (write-tag buf ,n +wire-length-delimited+)
            (let ((start (begin-length-prefix buf))
                  (k (car entry)) (v (cdr entry)))
              (write-tag buf 1 ,(wire-type (field-descriptor-type kf)))
              ,(write-value-form gen kf 'k)
              ,(if (eq (field-descriptor-type vf) :message)
                   `(when v
                      (write-tag buf 2 +wire-length-delimited+)
                      ,(write-value-form gen vf 'v))
                   `(progn (write-tag buf 2 ,(wire-type (field-descriptor-type vf)))
                           ,(write-value-form gen vf 'v)))
              (end-length-prefix buf start)))))
      ((and (finfo-repeated fi) (finfo-packed fi) (packed-kind type))
       `(let ((values ,acc))
          (when values
            (write-tag buf ,n +wire-length-delimited+)
            (let ((start (begin-length-prefix buf)))
              (dolist (v values)
                ,(write-value-form gen f 'v))
              (end-length-prefix buf start)))))
      ((finfo-repeated fi)
       `(dolist (v ,acc)
          (write-tag buf ,n ,(wire-type type))
          ,(write-value-form gen f 'v)))
      ((eq (finfo-presence fi) :explicit)
       `(let ((v ,acc))
          (when v
            (write-tag buf ,n ,(wire-type type))
            ,(write-value-form gen f 'v))))
      ((eq type :enum)
       `(let ((number (,(enum-value-symbol gen (field-descriptor-type-name f)) ,acc)))
          (unless (zerop number)
            (write-tag buf ,n +wire-varint+)
            (write-enum buf number))))
      (t
       `(let ((v ,acc))
          (unless ,(default-test type 'v)
            (write-tag buf ,n ,(wire-type type))
            ,(write-value-form gen f 'v)))))))

(defun repeated-var (fi) (make-symbol (symbol-name (finfo-slot fi))))

(defun read-field-clause (gen fi oneof-siblings vars)
  "The CASE clause decoding field FI (WIRE and P bound, POS to update)."
  (let* ((f (finfo-desc fi))
         (type (finfo-type fi))
         (expected (wire-type type))
         (var (cdr (assoc fi vars))))
    `(,(finfo-number fi)
      (cond
        ,@(cond
            ((finfo-map-entry fi)
             (multiple-value-bind (kf vf) (map-entry-fields (finfo-map-entry fi))
               `(((= wire +wire-length-delimited+)
                  (multiple-value-bind (s e p2) (read-length-delimited octets p end)
                    (let ((k ,(scalar-default gen kf))
                          (v ,(if (eq (field-descriptor-type vf) :message)
                                  nil
                                  (scalar-default gen vf)))
                          (q s))
                      (loop while (< q e)
                            do (multiple-value-bind (field w p) (read-tag octets q e)
                                 (cond ((and (= field 1) (= w ,(wire-type (field-descriptor-type kf))))
                                        (let ((end e))
                                          (multiple-value-setq (k q) ,(read-value-form gen kf))))
                                       ((and (= field 2) (= w ,(wire-type (field-descriptor-type vf))))
                                        (let ((end e))
                                          (multiple-value-setq (v q) ,(read-value-form gen vf))))
                                       (t (setf q (skip-field octets p e w field))))))
                      (push (cons k v) ,var))
                    (setf pos p2))))))
            ((finfo-repeated fi)
             `(((= wire ,expected)
                (multiple-value-bind (v p2) ,(read-value-form gen f)
                  (push v ,var)
                  (setf pos p2)))
               ,@(when (and (packed-kind type) (/= expected +wire-length-delimited+))
                   ;; Parsers accept packed and unpacked encodings alike.
                   `(((= wire +wire-length-delimited+)
                      (multiple-value-bind (list p2) (read-packed octets p end ,type)
                        (dolist (v list)
                          (push ,(if (eq type :enum)
                                     `(,(enum-keyword-symbol gen (field-descriptor-type-name f)) v)
                                     'v)
                                ,var))
                        (setf pos p2)))))))
            (t
             `(((= wire ,expected)
                (multiple-value-bind (v p2) ,(read-value-form gen f)
                  ,@(loop for other in oneof-siblings
                          unless (eq other fi)
                            collect `(setf (,(finfo-accessor other) m) nil))
                  (setf (,(finfo-accessor fi) m) v
                        pos p2))))))
        (t (unknown))))))

(defun enum-definitions (gen enum)
  (let* ((full (enum-descriptor-full-name enum))
         (to (enum-value-symbol gen full))
         (from (enum-keyword-symbol gen full))
         (values (enum-descriptor-values enum)))
    `((defun ,to (keyword)
        ,(format nil "The number of ~A value KEYWORD (integers pass through)." full)
        (case keyword
          ,@(loop for (name . number) in values
                  for k = (intern (lisp-name name) :keyword)
                  unless (member k seen) collect `(,k ,number)
                  collect k into seen)
          (t (if (typep keyword '(signed-byte 32))
                 keyword
                 (error "~S is not a value of enum ~A" keyword ,full)))))
      (defun ,from (number)
        ,(format nil "The keyword of ~A value NUMBER (the number itself if unknown)." full)
        (case number
          ,@(loop for (name . number) in values
                  unless (member number seen) collect `(,number ,(intern (lisp-name name) :keyword))
                  collect number into seen)
          (t number))))))

(defun message-definitions (gen message &optional defined)
  (let* ((full (message-descriptor-full-name message))
         (name (message-symbol gen full))
         (fields (field-infos gen message))
         (unknown-accessor (sym gen (base-name gen full) "-%UNKNOWN"))
         (encoder (encoder-symbol gen full))
         (decoder (decoder-symbol gen full))
         (vars (loop for fi in fields
                     when (finfo-repeated fi) collect (cons fi (repeated-var fi)))))
    `((defstruct (,name (:constructor ,(sym gen "MAKE-" (base-name gen full)))
                        (:copier nil) (:predicate nil))
        ,(format nil "Protobuf message ~A." full)
        ,@(mapcar (lambda (fi) (slot-spec gen fi defined)) fields)
        (%unknown nil :type (or null (simple-array (unsigned-byte 8) (*)))))
      (defun ,encoder (m buf)
        ,(format nil "Append the wire encoding of the ~A M to the OBUF BUF." full)
        (declare (type ,name m) (type clgrpc.octets:obuf buf)
                 (optimize (speed 3) (safety 1) (debug 0)))
        ,@(mapcar (lambda (fi) (write-field-form gen fi)) fields)
        (let ((u (,unknown-accessor m)))
          (when u (clgrpc.octets:obuf-write-bytes buf u)))
        buf)
      (defun ,decoder (octets &optional (start 0) (end (length octets)) (depth 0))
        ,(format nil "Decode a ~A from OCTETS[START,END).  DEPTH is how deep in
other messages it is nested: past CLGRPC.PROTOBUF:+MAX-MESSAGE-DEPTH+,
decoding fails, so that hostile input cannot exhaust the stack." full)
        (declare (type (simple-array (unsigned-byte 8) (*)) octets)
                 (type (and fixnum unsigned-byte) start end)
                 (type fixnum depth)
                 (optimize (speed 3) (safety 1) (debug 0)))
        (when (> depth clgrpc.protobuf:+max-message-depth+)
          (clgrpc.protobuf:decode-error start "messages nested more than ~D deep"
                                         clgrpc.protobuf:+max-message-depth+))
        (let ((m (,(sym gen "MAKE-" (base-name gen full))))
              (pos start)
              (unknown nil)
              ,@(mapcar #'cdr vars))
          (declare (type (and fixnum unsigned-byte) pos))
          (loop while (< pos end)
                do (let ((tag-start pos))
                     (multiple-value-bind (field wire p) (read-tag octets pos end)
                       (declare (ignorable p))
                       (flet ((unknown ()
                                (setf pos (collect-unknown-field
                                           (or unknown (setf unknown (clgrpc.octets:make-obuf 32)))
                                           octets tag-start p end wire field))))
                         (declare (ignorable #'unknown))
                         (case field
                           ,@(mapcar (lambda (fi)
                                       (read-field-clause
                                        gen fi
                                        (and (finfo-oneof fi)
                                             (remove-if-not (lambda (o) (eql (finfo-oneof o)
                                                                             (finfo-oneof fi)))
                                                            fields))
                                        vars))
                                     fields)
                           (t (unknown)))))))
          ,@(loop for (fi . var) in vars
                  collect `(setf (,(finfo-accessor fi) m) (nreverse ,var)))
          (when unknown
            (setf (,unknown-accessor m) (clgrpc.octets:obuf-contents unknown)))
          m))
      (defmethod encode-message ((m ,name) buf) (,encoder m buf))
      (defmethod decode-message ((type (eql ',name)) octets &optional (start 0) (end (length octets)))
        (,decoder octets start end)))))

(defun dependency-order (gen messages)
  "MESSAGES with each after the messages its singular message fields use,
as far as cycles allow."
  (let ((state (make-hash-table)) (order '()))
    (labels ((visit (m)
               (unless (gethash m state)
                 (setf (gethash m state) :visiting)
                 (dolist (f (message-descriptor-fields m))
                   (when (and (eq (field-descriptor-type f) :message)
                              (not (field-repeated-p f)))
                     (let ((dep (find-descriptor (gen-pool gen) (field-descriptor-type-name f))))
                       (when (member dep messages)
                         (visit dep)))))
                 (setf (gethash m state) :done)
                 (push m order))))
      (mapc #'visit messages)
      (nreverse order))))

(defun check-unique-names (gen)
  "Two protobuf names mapping to one Lisp symbol would silently redefine."
  (let ((seen (make-hash-table :test 'equal)))
    (maphash (lambda (full base)
               (let ((other (gethash base seen)))
                 (when other
                   (error "~A and ~A both map to the Lisp name ~A" other full base))
                 (setf (gethash base seen) full)))
             (gen-names gen))))

(defun exported-symbols (gen messages enums)
  "Every symbol a user of the generated code names."
  (append (loop for m in messages
                for full = (message-descriptor-full-name m)
                collect (message-symbol gen full)
                collect (sym gen "MAKE-" (base-name gen full))
                collect (encoder-symbol gen full)
                collect (decoder-symbol gen full)
                append (mapcar #'finfo-accessor (field-infos gen m)))
          (loop for e in enums
                collect (enum-value-symbol gen (enum-descriptor-full-name e))
                collect (enum-keyword-symbol gen (enum-descriptor-full-name e)))))

(defun export-form (symbols)
  `(eval-when (:compile-toplevel :load-toplevel :execute)
     (export ',symbols ,(package-name (symbol-package (first symbols))))))

(defun message-definitions-form (files &key (package *package*) only-files export)
  "The definitions for every message and enum of FILES (FILE-DESCRIPTORs,
e.g. from READ-FILE-DESCRIPTOR-SET), with symbols in PACKAGE, exported from
it if EXPORT.  ONLY-FILES, if given, restricts output to the files of those
names (imports still resolve).  Declarations come first so definitions may
refer to each other in any order."
  (let* ((gen (make-gen files package))
         (chosen (if only-files
                     (remove-if-not (lambda (f) (member (file-descriptor-name f) only-files
                                                        :test #'string=))
                                    files)
                     files))
         (messages (mapcan (lambda (f) (all-messages f)) chosen))
         (enums (mapcan (lambda (f) (copy-list (all-enums f))) chosen)))
    (check-unique-names gen)
    `(progn
       ,@(when (and export (or messages enums))
           (list (export-form (exported-symbols gen messages enums))))
       (declaim (ftype function
                       ,@(loop for m in messages
                               collect (encoder-symbol gen (message-descriptor-full-name m))
                               collect (decoder-symbol gen (message-descriptor-full-name m)))
                       ,@(loop for e in enums
                               collect (enum-value-symbol gen (enum-descriptor-full-name e))
                               collect (enum-keyword-symbol gen (enum-descriptor-full-name e)))))
       ,@(mapcan (lambda (e) (enum-definitions gen e)) enums)
       ;; Structures first, each after the types of its message fields
       ;; where there is no cycle.
       ,@(let ((defined '()))
           (mapcar (lambda (m)
                     (prog1 (first (message-definitions gen m defined))
                       (push (message-symbol gen (message-descriptor-full-name m)) defined)))
                   (dependency-order gen messages)))
       ,@(mapcan (lambda (m) (rest (message-definitions gen m))) messages)
       ',(mapcar (lambda (m) (message-symbol gen (message-descriptor-full-name m))) messages))))

(defun resolve-descriptor-path (path)
  "PATH relative to the file being compiled or loaded, as named (not its
truename, so a sandboxed build reads the declared input)."
  (let ((base (or *compile-file-pathname* *load-pathname*)))
    (if (and base (not (eq :absolute (first (pathname-directory (pathname path))))))
        (merge-pathnames path base)
        (pathname path))))

(defmacro define-messages-from-descriptor-set (path &key package only-files export)
  "Define structs, encoders and decoders for the messages of the binary
FileDescriptorSet at PATH (protoc --descriptor_set_out --include_imports, or
a proto_library's descriptor set), read when the form is macroexpanded.  A
relative PATH is taken from the directory of the file being compiled.
Symbols go to PACKAGE (default: the current package) and are exported from
it when EXPORT is true."
  (message-definitions-form (load-file-descriptor-set (resolve-descriptor-path path))
                            :package (or package *package*)
                            :only-files only-files :export export))
