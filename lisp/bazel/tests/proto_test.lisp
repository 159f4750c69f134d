;;;; lisp_proto_library end to end: the code generated from
;;;; proto/greeting.proto (which imports proto/stamp.proto) encodes the
;;;; bytes protobuf specifies, decodes them back, and its service stubs
;;;; make a real call over loopback.

(defpackage #:proto-rule.tests
  (:use #:common-lisp #:fiveam #:lispruletest.proto))

(in-package #:proto-rule.tests)

(def-suite all)
(in-suite all)

(defun greeting ()
  (make-greeting :text "hi" :stamp (make-stamp :seconds 5) :counts '(1 2) :mood :mood-happy))

;; Field by field: 1 "hi", 2 {1: 5} (the imported message), 3 packed [1 2],
;; 4 enum 1.
(defparameter *greeting-octets*
  (coerce '(#x0a 2 #x68 #x69  #x12 2 #x08 5  #x1a 2 1 2  #x20 1) '(vector (unsigned-byte 8))))

(test encodes-the-wire-format
  (is (equalp *greeting-octets* (clgrpc.protobuf:serialize (greeting)))))

(test decodes-what-it-encodes
  (let ((decoded (clgrpc.protobuf:deserialize 'greeting *greeting-octets*)))
    (is (equalp (greeting) decoded))
    (is (= 5 (stamp-seconds (greeting-stamp decoded))))))

(test every-generated-symbol-is-exported
  (dolist (name '("GREETING" "MAKE-GREETING" "GREETING-TEXT" "STAMP" "STAMP-SECONDS"
                  "GREETER-GREET" "REGISTER-GREETER"))
    (is (eq :external (nth-value 1 (find-symbol name '#:lispruletest.proto))) "~A" name)))

(test stubs-call-a-server
  (let ((server (clgrpc.grpc:make-server)))
    (register-greeter server :greet (lambda (g call)
                                      (declare (ignore call))
                                      (make-greeting :text (format nil "~A back" (greeting-text g))
                                                     :stamp (greeting-stamp g))))
    (let ((channel (clgrpc.grpc:make-channel "127.0.0.1" (clgrpc.grpc:server-start server))))
      (unwind-protect
           (let ((reply (greeter-greet channel (greeting) :timeout 10)))
             (is (string= "hi back" (greeting-text reply)))
             (is (equalp (make-stamp :seconds 5) (greeting-stamp reply))))
        (clgrpc.grpc:channel-close channel)
        (clgrpc.grpc:server-stop server :grace 1)))))
