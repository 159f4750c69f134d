;;;; Protobuf wire-format tests against byte vectors from the protobuf
;;;; encoding guide, plus truncated / malformed input.

(in-package #:clgrpc.tests)

(def-suite :clgrpc.protobuf :in :clgrpc)
(in-suite :clgrpc.protobuf)

(defmacro pb-hex (&body body)
  "Hex of what BODY writes to B."
  `(with-obuf (b) ,@body))

(defun pb-read (reader hex-string)
  "(value next-pos) of READER on the whole of HEX-STRING."
  (let ((v (hex hex-string)))
    (multiple-value-list (funcall reader v 0 (length v)))))

(test varint-known-vectors
  (is (string= "00" (pb-hex (clgrpc.protobuf:write-varint b 0))))
  (is (string= "01" (pb-hex (clgrpc.protobuf:write-varint b 1))))
  (is (string= "9601" (pb-hex (clgrpc.protobuf:write-varint b 150))))
  (is (string= "ac02" (pb-hex (clgrpc.protobuf:write-varint b 300))))
  (is (string= "ffffffffffffffffff01"
               (pb-hex (clgrpc.protobuf:write-varint b #xffffffffffffffff))))
  (is (equal '(150 2) (pb-read #'clgrpc.protobuf:read-varint "9601")))
  (is (equal '(300 2) (pb-read #'clgrpc.protobuf:read-varint "ac02")))
  (is (equal (list #xffffffffffffffff 10)
             (pb-read #'clgrpc.protobuf:read-varint "ffffffffffffffffff01"))))

(test varint-roundtrip-and-sizes
  (dolist (v (list 0 1 127 128 16383 16384 (1- (ash 1 21)) (ash 1 21) (ash 1 28) (ash 1 35)
                   (ash 1 42) (ash 1 49) (ash 1 56) (1- (ash 1 63)) (ash 1 63)
                   #xffffffffffffffff))
    (let ((b (make-obuf 16)))
      (clgrpc.protobuf:write-varint b v)
      (is (= (obuf-length b) (clgrpc.protobuf:varint-size v)))
      (is (equal (list v (obuf-length b))
                 (multiple-value-list
                  (clgrpc.protobuf:read-varint (obuf-data b) 0 (obuf-length b))))))))

(test negative-int32-is-ten-octets
  (is (string= "ffffffffffffffffff01" (pb-hex (clgrpc.protobuf:write-int32 b -1))))
  (is (= 10 (clgrpc.protobuf:int32-size -1)))
  (is (equal '(-1 10) (pb-read #'clgrpc.protobuf:read-int32 "ffffffffffffffffff01")))
  (is (equal '(-1 10) (pb-read #'clgrpc.protobuf:read-int64 "ffffffffffffffffff01")))
  (is (string= "80808080f8ffffffff01" (pb-hex (clgrpc.protobuf:write-int32 b (- (ash 1 31))))))
  (is (equal (list (- (ash 1 31)) 10)
             (pb-read #'clgrpc.protobuf:read-int32 "80808080f8ffffffff01")))
  (is (equal (list (- (ash 1 63)) 10)
             (pb-read #'clgrpc.protobuf:read-int64 "80808080808080808001")))
  ;; an int32 reader takes the low 32 bits of a 64-bit varint
  (is (equal '(#xffffffff 10) (pb-read #'clgrpc.protobuf:read-uint32 "ffffffffffffffffff01"))))

(test zigzag-table-from-encoding-guide
  (loop for (n z) in '((0 0) (-1 1) (1 2) (-2 3) (2147483647 4294967294)
                       (-2147483648 4294967295))
        do (is (= z (clgrpc.protobuf:zigzag-encode-32 n)))
           (is (= n (clgrpc.protobuf:zigzag-decode-32 z))))
  (loop for (n z) in '((0 0) (-1 1) (1 2) (-2 3) (9223372036854775807 18446744073709551614)
                       (-9223372036854775808 18446744073709551615))
        do (is (= z (clgrpc.protobuf:zigzag-encode-64 n)))
           (is (= n (clgrpc.protobuf:zigzag-decode-64 z))))
  (is (string= "03" (pb-hex (clgrpc.protobuf:write-sint32 b -2))))
  (is (equal '(-2 1) (pb-read #'clgrpc.protobuf:read-sint32 "03")))
  (is (equal '(-64 1) (pb-read #'clgrpc.protobuf:read-sint64 "7f"))))

(test fixed-width-little-endian
  (is (string= "78563412" (pb-hex (clgrpc.protobuf:write-fixed32 b #x12345678))))
  (is (string= "0807060504030201" (pb-hex (clgrpc.protobuf:write-fixed64 b #x0102030405060708))))
  (is (string= "ffffffff" (pb-hex (clgrpc.protobuf:write-sfixed32 b -1))))
  (is (string= "feffffffffffffff" (pb-hex (clgrpc.protobuf:write-sfixed64 b -2))))
  (is (equal '(#x12345678 4) (pb-read #'clgrpc.protobuf:read-fixed32 "78563412")))
  (is (equal '(-1 4) (pb-read #'clgrpc.protobuf:read-sfixed32 "ffffffff")))
  (is (equal '(-2 8) (pb-read #'clgrpc.protobuf:read-sfixed64 "feffffffffffffff")))
  (is (equal (list #x0102030405060708 8)
             (pb-read #'clgrpc.protobuf:read-fixed64 "0807060504030201"))))

(test float-and-double
  (is (string= "0000803f" (pb-hex (clgrpc.protobuf:write-float b 1.0f0))))
  (is (string= "000000000000f03f" (pb-hex (clgrpc.protobuf:write-double b 1.0d0))))
  (is (string= "000000000000f0bf" (pb-hex (clgrpc.protobuf:write-double b -1.0d0))))
  (is (equal '(1.0f0 4) (pb-read #'clgrpc.protobuf:read-float "0000803f")))
  (is (equal '(-2.5f0 4) (pb-read #'clgrpc.protobuf:read-float "000020c0")))
  (is (equal '(1.0d0 8) (pb-read #'clgrpc.protobuf:read-double "000000000000f03f")))
  (dolist (d (list 0d0 -0d0 3.141592653589793d0 -1d300 4.9d-324 most-positive-double-float))
    (let ((b (make-obuf 16)))
      (clgrpc.protobuf:write-double b d)
      (is (eql d (clgrpc.protobuf:read-double (obuf-data b) 0 8))))))

(test tags-and-message-from-guide
  ;; message Test1 { int32 a = 1; } with a = 150  ->  08 96 01
  (is (string= "089601" (pb-hex (clgrpc.protobuf:write-tag b 1 clgrpc.protobuf:+wire-varint+)
                          (clgrpc.protobuf:write-int32 b 150))))
  ;; message Test2 { string b = 2; } with b = "testing"
  (is (string= "120774657374696e67"
               (pb-hex (clgrpc.protobuf:write-tag b 2 clgrpc.protobuf:+wire-length-delimited+)
                 (clgrpc.protobuf:write-utf8-string b "testing"))))
  (is (equal '(1 0 1) (pb-read #'clgrpc.protobuf:read-tag "08")))
  (is (equal '(2 2 1) (pb-read #'clgrpc.protobuf:read-tag "12")))
  (is (= 1 (clgrpc.protobuf:tag-size 15)))
  (is (= 2 (clgrpc.protobuf:tag-size 16))))

(test length-delimited
  (let ((v (hex "ff 03 61 62 63 ff")))
    (is (equal '(2 5 5) (multiple-value-list (clgrpc.protobuf:read-length-delimited v 1 6))))
    (multiple-value-bind (bytes next) (clgrpc.protobuf:read-bytes v 1 6)
      (is (equalp (octets-of #x61 #x62 #x63) bytes))
      (is (= 5 next)))
    (is (equal '("abc" 5) (multiple-value-list (clgrpc.protobuf:read-utf8-string v 1 6)))))
  (let ((s (coerce (list #\h (code-char #xe9) (code-char #x1f600)) 'string)))
    (let ((b (make-obuf 16)))
      (clgrpc.protobuf:write-utf8-string b s)
      (is (= (obuf-length b) (clgrpc.protobuf:string-size s)))
      (is (string= s (clgrpc.protobuf:read-utf8-string (obuf-data b) 0 (obuf-length b))))))
  (is (string= "03010203" (pb-hex (clgrpc.protobuf:write-bytes b (octets-of 1 2 3)))))
  (is (string= "00" (pb-hex (clgrpc.protobuf:write-utf8-string b "")))))

(test packed-repeated-from-guide
  ;; message Test5 { repeated int32 f = 4 [packed=true]; } with 3, 270, 86942
  (is (string= "2206038e029ea705"
               (pb-hex (clgrpc.protobuf:write-packed b 4 '(3 270 86942) :int32))))
  (is (equal '((3 270 86942) 8)
             (let ((v (hex "2206038e029ea705")))
               (multiple-value-list (clgrpc.protobuf:read-packed v 1 (length v) :int32)))))
  (is (string= "" (pb-hex (clgrpc.protobuf:write-packed b 4 '() :int32))))
  (dolist (case '((:sint32 (-1 0 1 -1000000))
                  (:sint64 (-1 9223372036854775807 -9223372036854775808))
                  (:int64 (-1 5))
                  (:uint64 (0 18446744073709551615))
                  (:bool (t nil t))
                  (:enum (0 1 -1))
                  (:fixed32 (1 4294967295))
                  (:fixed64 (1 18446744073709551615))
                  (:sfixed32 (-1 2147483647))
                  (:sfixed64 (-1 9223372036854775807))
                  (:float (1.5f0 -0.25f0))
                  (:double (1.5d0 -1d100))))
    (destructuring-bind (kind values) case
      (let ((b (make-obuf 16)))
        (clgrpc.protobuf:write-packed b 7 (coerce values 'vector) kind)
        (multiple-value-bind (field wire p)
            (clgrpc.protobuf:read-tag (obuf-data b) 0 (obuf-length b))
          (is (= 7 field))
          (is (= 2 wire))
          (is (= (- (obuf-length b) p 1)
                 (clgrpc.protobuf:packed-payload-size values kind)))
          (is (equal values (clgrpc.protobuf:read-packed (obuf-data b) p (obuf-length b) kind))
              "~S roundtrip" kind))))))

(test unknown-fields-are-skipped-and-preserved
  ;; fields: 1 varint 150, 2 string "testing", 3 fixed32, 4 fixed64,
  ;; 5 group { 1: varint 1 }, 6 varint 1
  (let* ((msg (hex "089601 120774657374696e67 1d01020304 210102030405060708 2b0801 2c 3001"))
         (end (length msg))
         (unknown (make-obuf 16))
         (seen '()))
    (let ((pos 0))
      (loop while (< pos end)
            do (multiple-value-bind (field wire p) (clgrpc.protobuf:read-tag msg pos end)
                 (if (= field 6)
                     (multiple-value-bind (v p2) (clgrpc.protobuf:read-varint msg p end)
                       (push v seen)
                       (setf pos p2))
                     (setf pos (clgrpc.protobuf:collect-unknown-field
                                unknown msg pos p end wire field))))))
    (is (equal '(1) seen))
    ;; everything but field 6 is kept verbatim, in order
    (is (string= (octets-to-hex (subseq msg 0 (- end 2))) (obuf-hex unknown)))))

(defun pb-error-p (thunk)
  (handler-case (progn (funcall thunk) nil)
    (clgrpc.protobuf:protobuf-decode-error () t)))

(test truncated-and-malformed-input
  (flet ((fails (reader hex-string)
           (is (pb-error-p (lambda () (pb-read reader hex-string)))
               "~A on ~A should fail" reader hex-string)))
    (fails #'clgrpc.protobuf:read-varint "")
    (fails #'clgrpc.protobuf:read-varint "96")
    (fails #'clgrpc.protobuf:read-varint "ffffffffffffffffffff01") ; 11 octets
    (fails #'clgrpc.protobuf:read-fixed32 "010203")
    (fails #'clgrpc.protobuf:read-fixed64 "01020304050607")
    (fails #'clgrpc.protobuf:read-double "01020304050607")
    (fails #'clgrpc.protobuf:read-length-delimited "05616263")
    (fails #'clgrpc.protobuf:read-utf8-string "02c328")               ; invalid UTF-8
    (fails #'clgrpc.protobuf:read-bytes "8001")                  ; length 128, nothing
    (fails #'clgrpc.protobuf:read-tag "00")                      ; field 0
    (fails #'clgrpc.protobuf:read-tag "0f")                      ; wire type 7
    (fails #'clgrpc.protobuf:read-tag "0e"))                     ; wire type 6
  ;; slice bounds are honoured even when the vector continues
  (is (pb-error-p (lambda () (clgrpc.protobuf:read-fixed32 (hex "0102030405") 0 3))))
  (is (pb-error-p (lambda () (clgrpc.protobuf:read-packed (hex "0403") 0 2 :int32))))
  (is (pb-error-p (lambda () (clgrpc.protobuf:read-packed (hex "0180") 0 2 :int32))))
  (is (pb-error-p (lambda () (clgrpc.protobuf:skip-field (hex "0801") 0 2 3 1))))  ; unterminated group
  (is (pb-error-p (lambda () (clgrpc.protobuf:skip-field (hex "1c") 0 1 3 1))))    ; wrong end-group
  (is (pb-error-p (lambda () (clgrpc.protobuf:skip-field (hex "") 0 0 4 1))))
  ;; deeply nested groups are bounded, not a stack overflow
  (let ((deep (make-octets 1000)))
    (fill deep #x0b)                    ; field 1 start-group, repeated
    (is (pb-error-p (lambda () (clgrpc.protobuf:skip-field deep 0 1000 3 1))))))

(test random-garbage-only-signals-decode-errors
  (let ((state (sb-ext:seed-random-state 7))
        (wrong 0))
    (dotimes (i 3000)
      (let* ((n (random 20 state))
             (v (make-octets n))
             (unknown (make-obuf 16)))
        (dotimes (j n) (setf (aref v j) (random 256 state)))
        (handler-case
            (let ((pos 0))
              (loop while (< pos n)
                    do (multiple-value-bind (field wire p) (clgrpc.protobuf:read-tag v pos n)
                         (setf pos (clgrpc.protobuf:collect-unknown-field
                                    unknown v pos p n wire field)))))
          (clgrpc.protobuf:protobuf-decode-error () nil)
          (error () (incf wrong)))))
    (is (= 0 wrong))))
