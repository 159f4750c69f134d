;;;; Tests for the octet buffer, big-endian readers and UTF-8.

(in-package #:clgrpc.tests)

(def-suite :clgrpc.octets :in :clgrpc)
(in-suite :clgrpc.octets)

(test obuf-big-endian-writes
  (is (string= "01" (with-obuf (b) (obuf-write-u8 b 1))))
  (is (string= "0102" (with-obuf (b) (obuf-write-u16 b #x0102))))
  (is (string= "010203" (with-obuf (b) (obuf-write-u24 b #x010203))))
  (is (string= "01020304" (with-obuf (b) (obuf-write-u32 b #x01020304))))
  (is (string= "0102030405060708" (with-obuf (b) (obuf-write-u64 b #x0102030405060708))))
  (is (string= "ffffffff" (with-obuf (b) (obuf-write-u32 b #xffffffff)))))

(test obuf-grows-and-keeps-content
  (let ((b (make-obuf 16)))
    (dotimes (i 1000) (obuf-write-u8 b (mod i 256)))
    (is (= 1000 (obuf-length b)))
    (is (= 1000 (length (obuf-contents b))))
    (is (every (lambda (x i) (= x (mod i 256))) (obuf-contents b) (loop for i below 1000 collect i)))
    (obuf-write-bytes b (octets-of 9 8 7 6) 1 3)
    (is (equalp (octets-of 8 7) (obuf-subseq b 1000)))
    (obuf-reset b)
    (is (= 0 (obuf-length b)))
    (is (>= (length (obuf-data b)) 1000) "reset keeps storage")))

;; A nested message with a large bytes field: the buffer grows once, and
;; the length prefix patched in after the field (3 octets more) fits in it
;; instead of doubling it: the encoding is then small enough to be parked
;; as it is, with no copy.
(test obuf-grows-once-for-a-large-field-and-its-prefix
  (let ((b (make-obuf 4096))
        (payload (make-array (* 3 1024 1024) :element-type '(unsigned-byte 8) :initial-element 7)))
    (let ((start (clgrpc.protobuf:begin-length-prefix b)))
      (clgrpc.protobuf:write-bytes b payload)
      (let ((storage (obuf-data b)))
        (clgrpc.protobuf:end-length-prefix b start)
        (is (eq storage (obuf-data b)) "the prefix grew the buffer again")))
    (is (< (length (obuf-data b)) (* 5/4 (obuf-length b)))
        "a buffer of ~D octets for ~D" (length (obuf-data b)) (obuf-length b))
    (is (= 7 (aref (obuf-data b) (1- (obuf-length b)))))))

(test obuf-back-patching
  (let ((b (make-obuf 16)))
    (obuf-write-u24 b 0)
    (obuf-write-u32 b 0)
    (obuf-set-u24 b 0 #xabcdef)
    (obuf-set-u32 b 3 #x12345678)
    (obuf-set-u8 b 6 #x99)
    (is (string= "abcdef12345699" (obuf-hex b)))))

(test obuf-view-is-zero-copy
  (let ((b (make-obuf 16)))
    (obuf-write-u16 b #xbeef)
    (multiple-value-bind (data start end) (obuf-view b)
      (is (eq data (obuf-data b)))
      (is (= 0 start))
      (is (= 2 end)))))

(test big-endian-readers
  (let ((v (hex "01 02 03 04 05 06 07 08 ff")))
    (is (= 1 (read-u8 v 0)))
    (is (= #x0102 (read-u16 v 0)))
    (is (= #x010203 (read-u24 v 0)))
    (is (= #x01020304 (read-u32 v 0)))
    (is (= #x0102030405060708 (read-u64 v 0)))
    (is (= #x7f (logand (read-u8 v 8) #x7f)))
    (is (= #x7fffffff (read-u31 (hex "ffffffff") 0)))))

(test latin1-roundtrip
  (let ((s (coerce (loop for i below 256 collect (code-char i)) 'string)))
    (is (string= s (octets-to-latin1 (latin1-to-octets s)))))
  (signals error (latin1-to-octets (string (code-char 300)))))

(test utf8-roundtrip
  (dolist (s (list "" "hello" (coerce (list (code-char #xe9) (code-char #x20ac)
                                            (code-char #x1f600) #\a)
                                      'string)))
    (let ((u (string-to-utf8 s)))
      (is (= (length u) (utf8-length s)))
      (is (string= s (utf8-to-string u)))))
  (is (string= "c3a9e282acf09f9880"
               (octets-to-hex (string-to-utf8 (coerce (list (code-char #xe9) (code-char #x20ac)
                                                            (code-char #x1f600))
                                                      'string))))))

(test utf8-write-checks-a-given-count
  ;; A caller that counted the octets for a length prefix passes the
  ;; count; one that does not match is an error, and the buffer keeps its fill.
  (let ((buf (make-obuf 16))
        (s (coerce (list #\a (code-char #xe9)) 'string)))
    (obuf-write-utf8 buf s 3)
    (is (string= "61c3a9" (octets-to-hex (obuf-contents buf))))
    (signals error (obuf-write-utf8 buf s 2))
    (signals error (obuf-write-utf8 buf s 4))
    (is (= 3 (obuf-fill buf)))))

(test utf8-rejects-malformed
  (dolist (bad '("80" "c0af" "c3" "e282" "eda080" "f4908080" "f8888080" "e08080"))
    (signals utf8-decoding-error (utf8-to-string (hex bad)))))
