;;;; Protobuf messages: the first octet chooses a message type, the rest is
;;;; decoded as that message by its generated decoder.  A message that decodes
;;;; must survive a round trip: its encoding decodes again, to a message that
;;;; encodes to the same octets (encoding is canonical; comparing octets
;;;; rather than messages keeps NaN payloads and -0.0 exact).  The test
;;;; messages pack only int32s, so a range of first octets reads packed
;;;; payloads of every scalar kind instead, with the same round trip.
;;;; PROTOBUF-DECODE-ERROR is the documented rejection.

(in-package #:clgrpc.fuzz)

(defparameter *message-types*
  (mapcar (lambda (name) (find-symbol name '#:clgrpc.fuzz.pb))
          '("EVERYTHING" "EVERYTHING.INNER" "FEATURE" "RECTANGLE" "ROUTE-NOTE" "ROUTE-SUMMARY"
            "POINT"))
  "Everything first: most of the inputs go to it.")

(defparameter *packed-kinds*
  #(:int32 :int64 :uint32 :uint64 :sint32 :sint64 :bool :enum :fixed32 :fixed64 :sfixed32
    :sfixed64 :float :double))

(defun message-type (selector)
  "The message type SELECTOR chooses, or a packed kind for 112 to 127."
  (cond ((< selector 112) (first *message-types*)) ; most inputs go to Everything
        ((< selector 128) (aref *packed-kinds* (mod selector (length *packed-kinds*))))
        (t (nth (mod selector (length *message-types*)) *message-types*))))

(defun packed-octets (values kind)
  (with-obuf-contents (buf)
    (clgrpc.protobuf:write-packed buf 1 values kind)))

(defun run-packed (octets kind)
  "Packed payloads of KIND (length prefix included) back to back."
  (let ((pos 1))
    (loop while (< pos (length octets))
          do (multiple-value-bind (values next)
                 (clgrpc.protobuf:read-packed octets pos (length octets) kind)
               (let* ((encoded (packed-octets values kind))
                      ;; After the tag (one octet, field 1).
                      (again (packed-octets (clgrpc.protobuf:read-packed encoded 1 (length encoded) kind)
                                            kind)))
                 (check (equalp encoded again) "packed ~A re-encodes as ~A, then as ~A" kind
                        (octets-to-hex encoded) (octets-to-hex again)))
               (setf pos next)))))

(defun run-protobuf (octets)
  (when (plusp (length octets))
    (let ((type (message-type (aref octets 0))))
      (if (keywordp type)
          (run-packed octets type)
          (let* ((message (clgrpc.protobuf:decode-message type octets 1 (length octets)))
                 (encoded (clgrpc.protobuf:serialize message))
                 (again (clgrpc.protobuf:serialize (clgrpc.protobuf:deserialize type encoded))))
            (check (equalp encoded again) "~A re-encodes as ~A, then as ~A" type
                   (octets-to-hex encoded) (octets-to-hex again)))))))

(defun pb-make (name &rest args)
  (apply (find-symbol (concatenate 'string "MAKE-" name) '#:clgrpc.fuzz.pb) args))

(defun protobuf-input (selector message)
  (concatenate 'octets (octets-from selector) (clgrpc.protobuf:serialize message)))

(defun protobuf-seeds ()
  (flet ((point (lat lng) (pb-make "POINT" :latitude lat :longitude lng))
         (inner (&rest args) (apply #'pb-make "EVERYTHING.INNER" args)))
    (list
     (cons "everything-full"
           (protobuf-input
            0 (pb-make "EVERYTHING"
                       :f-double 3.5d0 :f-float 1.25f0 :f-int64 -9000000000
                       :f-uint64 18000000000000000000 :f-int32 -5 :f-fixed64 123456789012
                       :f-fixed32 4000000000 :f-bool t :f-string (map 'string #'code-char '(104 233 108 108 111)) :f-bytes (octets-from 0 1 255)
                       :f-uint32 4294967295 :f-enum :blue :f-sfixed32 -7 :f-sfixed64 -8
                       :f-sint32 -100 :f-sint64 -200000000000
                       :inner (inner :mood :happy :children (list (inner :children (list (inner)))))
                       :point (point 409146138 -746188906)
                       :packed-ints '(1 -1 300) :unpacked-ints '(7 -7) :names '("a" "")
                       :counts '(("x" . 1) ("y" . -2)) :maybe 0 :choice-text "picked")))
     (cons "everything-oneof-inner"
           (protobuf-input 1 (pb-make "EVERYTHING" :choice-inner (inner :mood :happy) :maybe 7)))
     ;; Fields the message does not define (kept as unknown fields): a
     ;; varint, fixed64, a length-delimited, a group, fixed32.
     (cons "everything-unknown"
           (octets-from 2 #xa8 #x06 #x01 #xb1 #x06 1 2 3 4 5 6 7 8 #xba #x06 2 "hi"
                        #xc3 #x06 #x08 #x01 #xc4 #x06 #xcd #x06 1 2 3 4))
     ;; A packed field sent unpacked and the other way round: both are legal.
     (cons "everything-packing-swapped" (octets-from 3 #xf0 #x01 #x01 #xfa #x01 #x02 #x03 #x04))
     (cons "inner-nested"
           (protobuf-input 129 (inner :children (list (inner :mood :happy
                                                             :children (list (inner :mood :happy)))))))
     (cons "feature" (protobuf-input 130 (pb-make "FEATURE" :name "a feature"
                                                            :location (point 1 -1))))
     (cons "rectangle" (protobuf-input 131 (pb-make "RECTANGLE" :lo (point 0 0) :hi (point -5 5))))
     (cons "route-note" (protobuf-input 132 (pb-make "ROUTE-NOTE" :location (point 3 4)
                                                                  :message (format nil "~C note" (code-char #x2713)))))
     ;; Packed payloads: varints of 1 to 10 octets, fixed widths, a double.
     (cons "packed-int64" (octets-from 113 5 #x01 #xff #x01 #x80 #x01))
     (cons "packed-sint64" (concatenate 'octets (octets-from 117)
                                        (subseq (packed-octets '(-1 1 -300 #x7fffffffffffffff) :sint64) 1)))
     (cons "packed-fixed64" (concatenate 'octets (octets-from 121)
                                         (subseq (packed-octets '(1 #xffffffffffffffff) :fixed64) 1)))
     (cons "packed-double" (concatenate 'octets (octets-from 125)
                                        (subseq (packed-octets '(1.5d0 -0d0) :double) 1)))
     (cons "route-summary" (protobuf-input 133 (pb-make "ROUTE-SUMMARY" :point-count 10 :feature-count 3
                                                                        :distance 123456
                                                                        :elapsed-time 2147483647))))))

(define-target "protobuf"
  :files '((:clgrpc . "src/utf8.lisp")
           (:clgrpc . "src/protobuf/decode.lisp")
           (:clgrpc . "fuzz/messages.lisp"))
  :run #'run-protobuf
  :expected '(clgrpc.protobuf:protobuf-decode-error)
  :seeds #'protobuf-seeds
  :max-length 2048
  ;; Tags of Everything's fields by wire type, a group start and end, an
  ;; over-long varint, invalid UTF-8.
  :tokens (list (octets-from #x9a #x01) (octets-from #xf2 #x01) (octets-from #x8a #x02)
                (octets-from #x0b) (octets-from #x0c) (octets-from #xff #xff #xff #xff #xff #xff #xff #xff #xff #x01)
                (octets-from #x4a #x02 #xc3 #x28) (octets-from #xa2 #x01) (octets-from #xfa #x01)))
