;;;; Generated message code against bytes produced by the Go protobuf
;;;; runtime (tests/data/messages, made by :fixture_messages): decoding
;;;; Go's bytes gives the expected objects, and encoding those objects gives
;;;; Go's bytes back, octet for octet.  Then unknown fields, alternative
;;;; encodings, oneofs, malformed input, and the generated service stubs
;;;; over a real connection.

(in-package #:clgrpc.tests)

(def-suite :clgrpc.codegen :in :clgrpc)
(in-suite :clgrpc.codegen)

(eval-when (:compile-toplevel :load-toplevel :execute)
  (defun read-message-fixture (name)
    (let ((path (merge-pathnames (concatenate 'string "data/messages/" name ".bin")
                                 (or *compile-file-pathname* *load-pathname*))))
      (with-open-file (in path :element-type '(unsigned-byte 8))
        (let ((v (make-octets (file-length in))))
          (read-sequence v in)
          v)))))

;;; Read while compiling (FiveAM compiles test bodies when they run, when
;;; the source directory may be gone), like descriptor-tests.lisp does.
(defparameter *go-fixtures*
  '#.(mapcar (lambda (name) (cons name (read-message-fixture name)))
             '("routeguide.Point.basic" "routeguide.Point.zero" "routeguide.Feature.named"
               "routeguide.Rectangle.area" "routeguide.RouteNote.unicode"
               "routeguide.RouteSummary.full" "clgrpc.test.Everything.full"
               "clgrpc.test.Everything.sparse")))

(defun go-bytes (name)
  (coerce (or (cdr (assoc name *go-fixtures* :test #'string=))
              (error "no fixture ~A" name))
          'octets))

(defun ustring (&rest parts)
  "A string from characters and code points (keeps sources ASCII)."
  (coerce (loop for p in parts
                append (if (integerp p) (list (code-char p)) (coerce p 'list)))
          'string))

(defun pb (name) (find-symbol (string name) :clgrpc.tests.pb))

(defun make-pb (name &rest args) (apply (pb (format nil "MAKE-~A" name)) args))

(defun encode-pb (message)
  (clgrpc.protobuf:serialize message))

(defun decode-pb (name octets)
  (clgrpc.protobuf:deserialize (pb name) octets))

(defun check-both-ways (name expected octets)
  "Go's OCTETS decode to EXPECTED, and EXPECTED encodes to OCTETS."
  (is (equalp expected (decode-pb name octets)))
  (is (equalp octets (encode-pb expected))))

;;; ------------------------------------------------------------------

(test lisp-names
  (is (string= "ROUTE-NOTE" (clgrpc.codegen:lisp-name "RouteNote")))
  (is (string= "POINT-COUNT" (clgrpc.codegen:lisp-name "point_count")))
  (is (string= "HTTP-SERVER" (clgrpc.codegen:lisp-name "HTTPServer")))
  (is (string= "F-INT64" (clgrpc.codegen:lisp-name "f_int64")))
  (is (string= "MOOD-UNSPECIFIED" (clgrpc.codegen:lisp-name "MOOD_UNSPECIFIED")))
  (is (string= "GET-FEATURE" (clgrpc.codegen:lisp-name "GetFeature"))))

(defun point (lat lng) (make-pb "POINT" :latitude lat :longitude lng))

(test route-guide-messages-match-go
  (check-both-ways "POINT" (point 409146138 -746188906) (go-bytes "routeguide.Point.basic"))
  (check-both-ways "POINT" (point 0 0) (go-bytes "routeguide.Point.zero"))
  (check-both-ways "FEATURE"
                   (make-pb "FEATURE" :name "Berkshire Valley Management Area Trail, Jefferson, NJ, USA"
                                      :location (point 409146138 -746188906))
                   (go-bytes "routeguide.Feature.named"))
  (check-both-ways "RECTANGLE"
                   (make-pb "RECTANGLE" :lo (point 400000000 -750000000)
                                        :hi (point 420000000 -730000000))
                   (go-bytes "routeguide.Rectangle.area"))
  (check-both-ways "ROUTE-NOTE"
                   (make-pb "ROUTE-NOTE" :location (point 0 1)
                                         :message (ustring "Gr" #xfc #xdf "e, " #x4e16 #x754c " " #x2713))
                   (go-bytes "routeguide.RouteNote.unicode"))
  (check-both-ways "ROUTE-SUMMARY"
                   (make-pb "ROUTE-SUMMARY" :point-count 10 :feature-count 3 :distance 123456
                                            :elapsed-time 2147483647)
                   (go-bytes "routeguide.RouteSummary.full")))

(defun inner (&rest args) (apply #'make-pb "EVERYTHING.INNER" args))

(test everything-matches-go
  (check-both-ways
   "EVERYTHING"
   (make-pb "EVERYTHING"
            :f-double 3.5d0 :f-float 1.25f0 :f-int64 -9000000000 :f-uint64 18000000000000000000
            :f-int32 -5 :f-fixed64 123456789012 :f-fixed32 4000000000 :f-bool t
            :f-string (ustring "h" #xe9 "llo w" #xf6 "rld " #x2713)
            :f-bytes (octets-of 0 1 2 255) :f-uint32 4294967295 :f-enum :blue
            :f-sfixed32 -7 :f-sfixed64 -8 :f-sint32 -100 :f-sint64 -200000000000
            :inner (inner :mood :happy
                          :children (list (inner :mood :mood-unspecified)
                                          (inner :children (loop repeat 50 collect (inner :mood :happy)))))
            :point (point 409146138 -746188906)
            :packed-ints '(1 -1 300) :unpacked-ints '(7 -7)
            :names (list "a" "" (make-string 200 :initial-element #\c))
            :counts '(("x" . 1) ("y" . -2)) :maybe 0 :choice-text "picked")
   (go-bytes "clgrpc.test.Everything.full"))
  ;; explicit presence: MAYBE 7 and a oneof message; an enum with a negative number
  (check-both-ways "EVERYTHING"
                   (make-pb "EVERYTHING" :choice-inner (inner :mood :happy) :maybe 7 :f-enum :blue)
                   (go-bytes "clgrpc.test.Everything.sparse")))

(test defaults-are-not-written
  (is (equalp (octets-of) (encode-pb (make-pb "EVERYTHING"))))
  ;; but explicit presence writes a zero
  (is (equalp (octets-of #x90 #x02 0) (encode-pb (make-pb "EVERYTHING" :maybe 0))))
  ;; -0.0 is not the default
  (is (equalp (octets-of #x15 0 0 0 #x80) (encode-pb (make-pb "EVERYTHING" :f-float -0f0)))))

(test unknown-fields-survive
  (let* ((bytes (concatenate 'octets (go-bytes "routeguide.Point.basic")
                             ;; field 99 varint 5, field 100 length-delimited "hi"
                             (octets-of #x98 #x06 5 #xa2 #x06 2 #x68 #x69)))
         (p (decode-pb "POINT" bytes)))
    (is (= 409146138 (funcall (pb "POINT-LATITUDE") p)))
    (is (equalp bytes (encode-pb p)))))

(test alternative-encodings-accepted
  ;; packed_ints (30) sent unpacked, unpacked_ints (31) sent packed
  (let ((m (decode-pb "EVERYTHING" (octets-of #xf0 #x01 1 #xf0 #x01 2 #xfa #x01 2 3 4))))
    (is (equal '(1 2) (funcall (pb "EVERYTHING-PACKED-INTS") m)))
    (is (equal '(3 4) (funcall (pb "EVERYTHING-UNPACKED-INTS") m))))
  ;; a known field with the wrong wire type is kept as unknown
  (let ((m (decode-pb "POINT" (octets-of #x0d 1 2 3 4))))
    (is (= 0 (funcall (pb "POINT-LATITUDE") m)))
    (is (equalp (octets-of #x0d 1 2 3 4) (encode-pb m))))
  ;; an unknown enum number is kept as the number
  (let ((m (decode-pb "EVERYTHING" (octets-of #x70 42))))
    (is (eql 42 (funcall (pb "EVERYTHING-F-ENUM") m)))
    (is (equalp (octets-of #x70 42) (encode-pb m)))))

(test oneof-last-wins
  (let ((m (decode-pb "EVERYTHING" (concatenate 'octets
                                                (octets-of #xc2 #x02 1 #x61)        ; choice_text "a"
                                                (octets-of #xca #x02 2 #x08 #x05)))))  ; choice_inner
    (is (null (funcall (pb "EVERYTHING-CHOICE-TEXT") m)))
    (is (equalp (inner :mood :happy) (funcall (pb "EVERYTHING-CHOICE-INNER") m)))))

(test malformed-messages-signal-decode-errors
  (dolist (bad (list (octets-of #x08) (octets-of #x08 #x80) (octets-of #x12 5 1)
                     (octets-of #x9a #x01 2 #xc3 #x28)  ; f_string with invalid UTF-8
                     (octets-of #x00 1)))
    (signals clgrpc.protobuf:protobuf-decode-error (decode-pb "EVERYTHING" bad))))

(test long-nested-length-prefixes
  ;; nested messages of 128+ octets need multi-octet length prefixes
  (let* ((m (make-pb "EVERYTHING" :inner (inner :children (loop repeat 1000 collect (inner :mood :happy)))))
         (bytes (encode-pb m)))
    (is (equalp m (decode-pb "EVERYTHING" bytes)))
    (is (= (length bytes) (clgrpc.protobuf:message-size m)))))

(test nesting-limit
  ;; Inner.children nests Inner in itself: 100 levels below the top decode,
  ;; 100,000 (a few hundred kilobytes of hostile input) fail cleanly
  ;; instead of exhausting the stack.
  (flet ((nested (depth)
           ;; field 2 (children), length-delimited, wrapping the level below
           (let ((bytes (octets-of)))
             (dotimes (i depth bytes)
               (let ((buf (clgrpc.octets:make-obuf 16)))
                 (clgrpc.octets:obuf-write-u8 buf #x12)
                 (clgrpc.protobuf:write-varint buf (length bytes))
                 (clgrpc.octets:obuf-write-bytes buf bytes)
                 (setf bytes (clgrpc.octets:obuf-contents buf)))))))
    (is (not (null (decode-pb "EVERYTHING.INNER" (nested 100)))))
    (signals clgrpc.protobuf:protobuf-decode-error (decode-pb "EVERYTHING.INNER" (nested 102)))
    (signals clgrpc.protobuf:protobuf-decode-error (decode-pb "EVERYTHING.INNER" (nested 100000)))))

(test generated-services-end-to-end
  (let* ((server (clgrpc.grpc:make-server))
         (port nil))
    (funcall (pb "REGISTER-ROUTE-GUIDE") server
             :get-feature (lambda (p call)
                            (declare (ignore call))
                            (make-pb "FEATURE" :name "here" :location p))
             :list-features (lambda (rect call)
                              (dotimes (i 3)
                                (clgrpc.grpc:call-send
                                 call (make-pb "FEATURE" :name (format nil "f~D" i)
                                                         :location (funcall (pb "RECTANGLE-LO") rect)))))
             :record-route (lambda (call)
                             (make-pb "ROUTE-SUMMARY"
                                      :point-count (loop while (clgrpc.grpc:call-recv call) count t)))
             :route-chat (lambda (call)
                           (loop for note = (clgrpc.grpc:call-recv call) while note
                                 do (clgrpc.grpc:call-send call note))))
    (setf port (clgrpc.grpc:server-start server))
    (let ((ch (clgrpc.grpc:make-channel "127.0.0.1" port)))
      (unwind-protect
           (progn
             (is (equalp (make-pb "FEATURE" :name "here" :location (point 1 2))
                         (funcall (pb "ROUTE-GUIDE-GET-FEATURE") ch (point 1 2) :timeout 5)))
             (let ((call (funcall (pb "ROUTE-GUIDE-LIST-FEATURES") ch
                                  (make-pb "RECTANGLE" :lo (point 5 6)) :timeout 5)))
               (is (equal '("f0" "f1" "f2")
                          (loop for f = (clgrpc.grpc:call-recv call) while f
                                collect (funcall (pb "FEATURE-NAME") f)))))
             (let ((call (funcall (pb "ROUTE-GUIDE-RECORD-ROUTE") ch :timeout 5)))
               (dotimes (i 7) (clgrpc.grpc:call-send call (point i i)))
               (is (= 7 (funcall (pb "ROUTE-SUMMARY-POINT-COUNT")
                                 (clgrpc.grpc:call-close-and-recv call)))))
             (let ((call (funcall (pb "ROUTE-GUIDE-ROUTE-CHAT") ch :timeout 5))
                   (note (make-pb "ROUTE-NOTE" :message "hi" :location (point 3 4))))
               (clgrpc.grpc:call-send call note)
               (is (equalp note (clgrpc.grpc:call-recv call)))
               (clgrpc.grpc:call-close-send call)
               (is (null (clgrpc.grpc:call-recv call))))
             ;; the Echo service is generated but not registered here
             (is (equal "UNIMPLEMENTED"
                        (first (status-of (lambda () (funcall (pb "ECHO-UNARY") ch (make-pb "EVERYTHING"))))))))
        (clgrpc.grpc:channel-close ch)
        (clgrpc.grpc:server-stop server :grace 1)))))
