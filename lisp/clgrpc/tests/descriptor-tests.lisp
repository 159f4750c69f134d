;;;; Descriptor-set reader tests against protoc-generated fixtures
;;;; (tests/data, made by :fixture_descriptor_sets).  The fixtures are embedded at compile
;;;; time so the compiled tests do not depend on where they are loaded from.  The path is
;;;; taken relative to the file as named (not its truename), so that a sandboxed build reads
;;;; the declared copy of the fixture.

(in-package #:clgrpc.tests)

(def-suite :clgrpc.descriptor :in :clgrpc)
(in-suite :clgrpc.descriptor)

(eval-when (:compile-toplevel :load-toplevel :execute)
  (defun read-fixture (name)
    (let ((path (merge-pathnames (concatenate 'string "data/" name)
                                 (or *compile-file-pathname* *load-pathname*))))
      (with-open-file (in path :element-type '(unsigned-byte 8))
        (let ((v (make-octets (file-length in))))
          (read-sequence v in)
          v)))))

(defparameter *route-guide-pb* #.(read-fixture "route_guide.pb"))
(defparameter *test-types-pb* #.(read-fixture "test_types.pb"))

(defun fixture (v) (coerce v 'octets))

(defun names (list key) (mapcar key list))

(test route-guide-descriptor
  (let* ((files (clgrpc.descriptor:read-file-descriptor-set (fixture *route-guide-pb*)))
         (file (first files))
         (pool (clgrpc.descriptor:make-descriptor-pool files)))
    (is (= 1 (length files)))
    (is (string= "proto/routeguide/route_guide.proto" (clgrpc.descriptor:file-descriptor-name file)))
    (is (string= "routeguide" (clgrpc.descriptor:file-descriptor-package file)))
    (is (string= "proto3" (clgrpc.descriptor:file-descriptor-syntax file)))
    (is (equal '("Point" "Rectangle" "Feature" "RouteNote" "RouteSummary")
               (names (clgrpc.descriptor:file-descriptor-messages file)
                      #'clgrpc.descriptor:message-descriptor-name)))
    (let ((point (clgrpc.descriptor:find-descriptor pool ".routeguide.Point")))
      (is (string= "routeguide.Point" (clgrpc.descriptor:message-descriptor-full-name point)))
      (is (equal '(("latitude" 1 :int32 :optional) ("longitude" 2 :int32 :optional))
                 (mapcar (lambda (f) (list (clgrpc.descriptor:field-descriptor-name f)
                                           (clgrpc.descriptor:field-descriptor-number f)
                                           (clgrpc.descriptor:field-descriptor-type f)
                                           (clgrpc.descriptor:field-descriptor-label f)))
                         (clgrpc.descriptor:message-descriptor-fields point)))))
    (let ((feature (clgrpc.descriptor:find-descriptor pool "routeguide.Feature")))
      (is (equal '((:string nil) (:message ".routeguide.Point"))
                 (mapcar (lambda (f) (list (clgrpc.descriptor:field-descriptor-type f)
                                           (clgrpc.descriptor:field-descriptor-type-name f)))
                         (clgrpc.descriptor:message-descriptor-fields feature)))))
    (let ((service (clgrpc.descriptor:find-descriptor pool "routeguide.RouteGuide")))
      (is (equal '(("GetFeature" ".routeguide.Point" ".routeguide.Feature" nil nil
                    "/routeguide.RouteGuide/GetFeature")
                   ("ListFeatures" ".routeguide.Rectangle" ".routeguide.Feature" nil t
                    "/routeguide.RouteGuide/ListFeatures")
                   ("RecordRoute" ".routeguide.Point" ".routeguide.RouteSummary" t nil
                    "/routeguide.RouteGuide/RecordRoute")
                   ("RouteChat" ".routeguide.RouteNote" ".routeguide.RouteNote" t t
                    "/routeguide.RouteGuide/RouteChat"))
                 (mapcar (lambda (m)
                           (list (clgrpc.descriptor:method-descriptor-name m)
                                 (clgrpc.descriptor:method-descriptor-input-type m)
                                 (clgrpc.descriptor:method-descriptor-output-type m)
                                 (clgrpc.descriptor:method-descriptor-client-streaming-p m)
                                 (clgrpc.descriptor:method-descriptor-server-streaming-p m)
                                 (clgrpc.descriptor:method-descriptor-path m)))
                         (clgrpc.descriptor:service-descriptor-methods service)))))))

(test kitchen-sink-descriptor
  (let* ((files (clgrpc.descriptor:read-file-descriptor-set (fixture *test-types-pb*)))
         (pool (clgrpc.descriptor:make-descriptor-pool files))
         (file (second files))
         (everything (clgrpc.descriptor:find-descriptor pool "clgrpc.test.Everything")))
    ;; the set lists the import first, as protoc --include_imports does
    (is (equal '("proto/routeguide/route_guide.proto" "lisp/clgrpc/tests/data/test_types.proto")
               (names files #'clgrpc.descriptor:file-descriptor-name)))
    (is (equal '("proto/routeguide/route_guide.proto")
               (clgrpc.descriptor:file-descriptor-dependencies file)))
    (flet ((field (name)
             (find name (clgrpc.descriptor:message-descriptor-fields everything)
                   :key #'clgrpc.descriptor:field-descriptor-name :test #'string=)))
      ;; every scalar type maps to its keyword
      (is (equal '(:double :float :int64 :uint64 :int32 :fixed64 :fixed32 :bool :string :bytes
                   :uint32 :enum :sfixed32 :sfixed64 :sint32 :sint64 :message :message)
                 (mapcar (lambda (f) (clgrpc.descriptor:field-descriptor-type f))
                         (subseq (clgrpc.descriptor:message-descriptor-fields everything) 0 18))))
      (is (string= "fDouble" (clgrpc.descriptor:field-descriptor-json-name (field "f_double"))))
      (is (string= ".clgrpc.test.Color" (clgrpc.descriptor:field-descriptor-type-name
                                         (field "f_enum"))))
      ;; packing: proto3 default vs explicit [packed = false]; strings never
      (is-true (clgrpc.descriptor:field-packed-p (field "packed_ints") "proto3"))
      (is-false (clgrpc.descriptor:field-packed-p (field "unpacked_ints") "proto3"))
      (is-false (clgrpc.descriptor:field-packed-p (field "packed_ints") "proto2"))
      (is-false (clgrpc.descriptor:field-packed-p (field "names") "proto3"))
      ;; maps are repeated synthetic entry messages
      (let ((entry (clgrpc.descriptor:field-map-entry (field "counts") pool)))
        (is (string= "clgrpc.test.Everything.CountsEntry"
                     (clgrpc.descriptor:message-descriptor-full-name entry)))
        (is-true (clgrpc.descriptor:message-descriptor-map-entry-p entry)))
      (is (null (clgrpc.descriptor:field-map-entry (field "names") pool)))
      ;; oneofs, including proto3 optional's synthetic oneof
      (is (equal '("choice" "_maybe") (clgrpc.descriptor:message-descriptor-oneofs everything)))
      (is (eql 0 (clgrpc.descriptor:field-descriptor-oneof-index (field "choice_inner"))))
      (is-true (clgrpc.descriptor:field-descriptor-proto3-optional (field "maybe")))
      (is (null (clgrpc.descriptor:field-descriptor-oneof-index (field "f_int32")))))
    (is (equal '((100 . 111)) (clgrpc.descriptor:message-descriptor-reserved-ranges everything)))
    (is (equal '("old_name") (clgrpc.descriptor:message-descriptor-reserved-names everything)))
    ;; nested types and enums get fully qualified names
    (let ((inner (clgrpc.descriptor:find-descriptor pool ".clgrpc.test.Everything.Inner"))
          (mood (clgrpc.descriptor:find-descriptor pool "clgrpc.test.Everything.Inner.Mood"))
          (color (clgrpc.descriptor:find-descriptor pool "clgrpc.test.Color")))
      (is (string= "Inner" (clgrpc.descriptor:message-descriptor-name inner)))
      (is (equal '(("MOOD_UNSPECIFIED" . 0) ("HAPPY" . 5))
                 (clgrpc.descriptor:enum-descriptor-values mood)))
      (is (equal '(("COLOR_UNSPECIFIED" . 0) ("RED" . 1) ("GREEN" . 2) ("BLUE" . -1))
                 (clgrpc.descriptor:enum-descriptor-values color))))
    (is (= 3 (length (clgrpc.descriptor:all-messages file)))) ; Everything, Inner, CountsEntry
    (is (= 2 (length (clgrpc.descriptor:all-enums file))))
    (let ((echo (clgrpc.descriptor:find-descriptor pool "clgrpc.test.Echo")))
      (is (equal '((nil nil) (nil t) (t nil) (t t))
                 (mapcar (lambda (m) (list (clgrpc.descriptor:method-descriptor-client-streaming-p m)
                                           (clgrpc.descriptor:method-descriptor-server-streaming-p m)))
                         (clgrpc.descriptor:service-descriptor-methods echo)))))))

(test malformed-descriptor-sets
  (let ((v (fixture *route-guide-pb*)))
    ;; every truncation is either a clean decode (cut at a field boundary of
    ;; the outer set is impossible here: one file) or a decode error
    (is (= 0 (loop for cut from 1 below (length v)
                   count (handler-case
                             (progn (clgrpc.descriptor:read-file-descriptor-set v :end cut) t)
                           (clgrpc.protobuf:protobuf-decode-error () nil)))))
    ;; field 1 of the set must be length-delimited
    (signals clgrpc.protobuf:protobuf-decode-error
      (clgrpc.descriptor:read-file-descriptor-set (octets-of #x08 #x01)))
    ;; unknown fields are skipped
    (is (null (clgrpc.descriptor:read-file-descriptor-set (octets-of #x10 #x01))))
    ;; a negative field number (10-octet varint) is a decode error, not a type error
    (signals clgrpc.protobuf:protobuf-decode-error
      (clgrpc.descriptor:read-file-descriptor-set
       (hex "0a 10 22 0e 12 0c 18 ff ff ff ff ff ff ff ff ff 01")))))

(test mutated-descriptor-sets-only-signal-decode-errors
  ;; Flip random octets of a real descriptor set: the reader must either
  ;; succeed or signal PROTOBUF-DECODE-ERROR, never a type error.
  (let ((state (sb-ext:seed-random-state 3))
        (original (fixture *test-types-pb*))
        (wrong '()))
    (dotimes (i 2000)
      (let ((v (copy-seq original)))
        (dotimes (k (1+ (random 3 state)))
          (setf (aref v (random (length v) state)) (random 256 state)))
        (handler-case (clgrpc.descriptor:read-file-descriptor-set v)
          (clgrpc.protobuf:protobuf-decode-error () nil)
          (error (e) (push (type-of e) wrong)))))
    (is (null wrong) "unexpected conditions: ~S" (remove-duplicates wrong))))
