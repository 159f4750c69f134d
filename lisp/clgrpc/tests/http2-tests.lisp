;;;; HTTP/2 framing tests: byte-exact encodings of every frame type, decode
;;;; round trips, and malformed frames mapped to the right error code and
;;;; scope (RFC 9113 sections 4, 5.4, 6).

(in-package #:clgrpc.tests)

(def-suite :clgrpc.http2 :in :clgrpc)
(in-suite :clgrpc.http2)

(defun h2-decode (hex-string &rest keys)
  (apply #'clgrpc.http2:decode-frame (hex hex-string) keys))

(defun h2-error (thunk)
  "(code connection-p stream-id) of the HTTP2-ERROR THUNK signals, or :NO-ERROR."
  (handler-case (progn (funcall thunk) :no-error)
    (clgrpc.http2:http2-error (e)
      (list (clgrpc.http2:error-code-name (clgrpc.http2:http2-error-code e))
            (if (clgrpc.http2:http2-error-connection-p e) :connection :stream)
            (clgrpc.http2:http2-error-stream-id e)))))

(defun frame-payload-hex (f)
  (octets-to-hex (clgrpc.http2:frame-data f) :start (clgrpc.http2:frame-data-start f)
                                              :end (clgrpc.http2:frame-data-end f)))

;;; ------------------------------------------------------------------
;;; header

(test frame-header-codec
  (is (string= "00000501010000000f"
               (with-obuf (b) (clgrpc.http2:write-frame-header b 5 1 1 15))))
  (is (equal '(5 1 1 15) (multiple-value-list
                          (clgrpc.http2:decode-frame-header (hex "00000501010000000f") 0))))
  ;; the reserved bit is ignored on receipt
  (is (equal '(16777215 255 255 1)
             (multiple-value-list
              (clgrpc.http2:decode-frame-header (hex "ffffffffff80000001") 0))))
  (is (= 24 (length clgrpc.http2:+connection-preface+)))
  (is (string= "505249202a20485454502f322e300d0a0d0a534d0d0a0d0a"
               (octets-to-hex clgrpc.http2:+connection-preface+))))

(test begin-and-finish-frame-patch-length
  (let ((b (make-obuf 16)))
    (obuf-write-u8 b #xaa)               ; frames may start mid-buffer
    (let ((pos (clgrpc.http2:begin-frame b clgrpc.http2:+frame-data+ 0 3)))
      (obuf-write-bytes b (octets-of 1 2 3))
      (is (= 3 (clgrpc.http2:finish-frame b pos))))
    (is (string= "aa000003000000000003010203" (obuf-hex b)))))

;;; ------------------------------------------------------------------
;;; byte-exact encodings

(test encode-data
  (is (string= "00000500010000000168656c6c6f"
               (with-obuf (b) (clgrpc.http2:write-data-frame b 1 (latin1-to-octets "hello")
                                                             :end-stream t))))
  (is (string= (remove #\Space "00000900090000000103 68656c6c6f 000000")
               (with-obuf (b) (clgrpc.http2:write-data-frame b 1 (latin1-to-octets "hello")
                                                             :end-stream t :padding 3))))
  (is (string= "000002000000000007bbcc"
               (with-obuf (b) (clgrpc.http2:write-data-frame b 7 (octets-of #xaa #xbb #xcc #xdd)
                                                             :start 1 :end 3)))))

(test encode-headers
  (is (string= "0000020105000000018286"
               (with-obuf (b) (clgrpc.http2:write-headers-frame b 1 (octets-of #x82 #x86)
                                                                :end-stream t))))
  (is (string= "00000701240000000380000001ff8286"
               (with-obuf (b) (clgrpc.http2:write-headers-frame
                               b 3 (octets-of #x82 #x86) :priority-dependency 1
                                                         :priority-weight 256
                                                         :priority-exclusive t))))
  (is (string= "000005010c000000010282860000"
               (with-obuf (b) (clgrpc.http2:write-headers-frame b 1 (octets-of #x82 #x86)
                                                                :padding 2)))))

(test encode-control-frames
  (is (string= "000005020000000003000000010f"
               (with-obuf (b) (clgrpc.http2:write-priority-frame b 3 1 16))))
  (is (string= "000005020000000003800000010f"
               (with-obuf (b) (clgrpc.http2:write-priority-frame b 3 1 16 :exclusive t))))
  (is (string= "00000403000000000500000008"
               (with-obuf (b) (clgrpc.http2:write-rst-stream-frame b 5 clgrpc.http2:+cancel+))))
  (is (string= "00000c04000000000000030000006400040000ffff"
               (with-obuf (b) (clgrpc.http2:write-settings-frame b '((3 . 100) (4 . 65535))))))
  (is (string= "000000040000000000"
               (with-obuf (b) (clgrpc.http2:write-settings-frame b '()))))
  (is (string= "000000040100000000" (with-obuf (b) (clgrpc.http2:write-settings-ack b))))
  (is (string= "0000080601000000000102030405060708"
               (with-obuf (b) (clgrpc.http2:write-ping-frame b #x0102030405060708 :ack t))))
  (is (string= "0000080600000000000102030405060708"
               (with-obuf (b) (clgrpc.http2:write-ping-frame b (octets-of 1 2 3 4 5 6 7 8)))))
  (is (string= "00000a07000000000000000007000000016869"
               (with-obuf (b) (clgrpc.http2:write-goaway-frame
                               b 7 clgrpc.http2:+protocol-error+ (latin1-to-octets "hi")))))
  (is (string= "0000080700000000000000000700000000"
               (with-obuf (b) (clgrpc.http2:write-goaway-frame b 7 clgrpc.http2:+no-error+))))
  (is (string= "0000040800000000000000ffff"
               (with-obuf (b) (clgrpc.http2:write-window-update-frame b 0 65535))))
  (is (string= "0000020904000000018286"
               (with-obuf (b) (clgrpc.http2:write-continuation-frame b 1 (octets-of #x82 #x86)))))
  (is (string= "0000050504000000010000000282"
               (with-obuf (b) (clgrpc.http2:write-push-promise-frame b 1 2 (octets-of #x82))))))

(test header-block-splitting
  (let* ((block (make-octets 40))
         (expected (concatenate 'string
                                "000010010100000005" (make-string 32 :initial-element #\0)
                                "000010090000000005" (make-string 32 :initial-element #\0)
                                "000008090400000005" (make-string 16 :initial-element #\0))))
    (is (string= expected
                 (with-obuf (b) (clgrpc.http2:write-header-block-frames b 5 block 16
                                                                        :end-stream t))))
    ;; same result when the block was encoded in place and turned out too big
    (is (string= expected
                 (with-obuf (b)
                   (let ((pos (clgrpc.http2:begin-frame b clgrpc.http2:+frame-headers+
                                                        (logior clgrpc.http2:+flag-end-headers+
                                                                clgrpc.http2:+flag-end-stream+)
                                                        5)))
                     (obuf-write-bytes b block)
                     (clgrpc.http2:finish-headers-frame b pos 16)))))
    ;; a block that fits stays one frame
    (is (string= "0000020105000000058286"
                 (with-obuf (b)
                   (let ((pos (clgrpc.http2:begin-frame b clgrpc.http2:+frame-headers+
                                                        (logior clgrpc.http2:+flag-end-headers+
                                                                clgrpc.http2:+flag-end-stream+)
                                                        5)))
                     (obuf-write-bytes b (octets-of #x82 #x86))
                     (clgrpc.http2:finish-headers-frame b pos 16)))))))

;;; ------------------------------------------------------------------
;;; decoding

(test decode-data-frames
  (let ((f (h2-decode "00000900090000000103 68656c6c6f 000000")))
    (is (= clgrpc.http2:+frame-data+ (clgrpc.http2:frame-type f)))
    (is (= 1 (clgrpc.http2:frame-stream-id f)))
    (is (= 9 (clgrpc.http2:frame-length f)))
    (is (= 3 (clgrpc.http2:frame-pad-length f)))
    (is-true (clgrpc.http2:frame-end-stream-p f))
    (is (string= "68656c6c6f" (frame-payload-hex f))))
  (let ((f (h2-decode "000000000000000001")))
    (is (string= "" (frame-payload-hex f)))
    (is-false (clgrpc.http2:frame-end-stream-p f)))
  ;; padding that exactly fills the payload after the Pad Length octet
  (let ((f (h2-decode "0000030008000000010200 00")))
    (is (string= "" (frame-payload-hex f)))))

(test decode-headers-frames
  (let ((f (h2-decode "00000701240000000380000001ff8286")))
    (is (string= "8286" (frame-payload-hex f)))
    (is-true (clgrpc.http2:frame-end-headers-p f))
    (is-false (clgrpc.http2:frame-end-stream-p f))
    (is-true (clgrpc.http2:frame-priority-exclusive f))
    (is (= 1 (clgrpc.http2:frame-priority-dependency f)))
    (is (= 256 (clgrpc.http2:frame-priority-weight f))))
  (let ((f (h2-decode "000005010c000000010282860000")))
    (is (string= "8286" (frame-payload-hex f)))
    (is (= 2 (clgrpc.http2:frame-pad-length f)))
    (is (null (clgrpc.http2:frame-priority-dependency f))))
  ;; padded and prioritised together
  (let ((f (h2-decode "00000901 2c 00000003 01 00000001 0f 8286 00")))
    (is (string= "8286" (frame-payload-hex f)))
    (is (= 16 (clgrpc.http2:frame-priority-weight f)))))

(test decode-control-frames
  (let ((f (h2-decode "000005020000000003800000010f")))
    (is (= clgrpc.http2:+frame-priority+ (clgrpc.http2:frame-type f)))
    (is-true (clgrpc.http2:frame-priority-exclusive f))
    (is (= 1 (clgrpc.http2:frame-priority-dependency f)))
    (is (= 16 (clgrpc.http2:frame-priority-weight f))))
  (is (= 8 (clgrpc.http2:frame-error-code (h2-decode "00000403000000000500000008"))))
  (let ((f (h2-decode "00000c04000000000000030000006400040000ffff")))
    (is (equal '((3 . 100) (4 . 65535)) (clgrpc.http2:frame-settings f)))
    (is-false (clgrpc.http2:frame-ack-p f)))
  (let ((f (h2-decode "000000040100000000")))
    (is-true (clgrpc.http2:frame-ack-p f))
    (is (null (clgrpc.http2:frame-settings f))))
  (let ((f (h2-decode "0000080601000000000102030405060708")))
    (is-true (clgrpc.http2:frame-ack-p f))
    (is (= #x0102030405060708 (clgrpc.http2:frame-opaque-data f))))
  (let ((f (h2-decode "00000a07000000000080000007000000016869")))
    (is (= 7 (clgrpc.http2:frame-last-stream-id f)) "reserved bit ignored")
    (is (= 1 (clgrpc.http2:frame-error-code f)))
    (is (string= "6869" (frame-payload-hex f))))
  (is (= 65535 (clgrpc.http2:frame-increment (h2-decode "0000040800000000000000ffff"))))
  (is (= #x7fffffff (clgrpc.http2:frame-increment (h2-decode "000004080000000001ffffffff"))))
  (let ((f (h2-decode "0000020904000000018286")))
    (is-true (clgrpc.http2:frame-end-headers-p f))
    (is (string= "8286" (frame-payload-hex f))))
  (let ((f (h2-decode "0000050504000000010000000282")))
    (is (= 2 (clgrpc.http2:frame-promised-stream-id f)))
    (is (string= "82" (frame-payload-hex f))))
  (let ((f (h2-decode "0000080508000000010200000004820000")))
    (is (= 4 (clgrpc.http2:frame-promised-stream-id f)))
    (is (string= "82" (frame-payload-hex f)))))

(test decode-unknown-type-and-partial-input
  (let ((f (h2-decode "000003ff07000000010a0b0c")))
    (is (= #xff (clgrpc.http2:frame-type f)))
    (is (string= "0a0b0c" (frame-payload-hex f))))
  ;; not enough octets yet: NIL and the unchanged start position
  (is (equal '(nil 0) (multiple-value-list (h2-decode "00000500"))))
  (is (equal '(nil 0) (multiple-value-list (h2-decode "00000500010000000168656c6c"))))
  ;; consecutive frames from one buffer, starting mid-vector
  (let ((v (hex "ee 000000040100000000 0000040800000000000000ffff")))
    (multiple-value-bind (f1 p1) (clgrpc.http2:decode-frame v :start 1)
      (is-true (clgrpc.http2:frame-ack-p f1))
      (multiple-value-bind (f2 p2) (clgrpc.http2:decode-frame v :start p1)
        (is (= 65535 (clgrpc.http2:frame-increment f2)))
        (is (= p2 (length v)))))))

(test encode-decode-roundtrip
  (let ((b (make-obuf 16)))
    (clgrpc.http2:write-settings-frame b '((1 . 4096) (2 . 0) (3 . 100) (4 . 1048576)
                                           (5 . 16384) (6 . 8192) (#x99 . 7)))
    (clgrpc.http2:write-data-frame b 3 (make-octets 100) :padding 10)
    (clgrpc.http2:write-window-update-frame b 3 1000)
    (clgrpc.http2:write-goaway-frame b 9 clgrpc.http2:+enhance-your-calm+)
    (let ((v (obuf-contents b)) (pos 0) (frames '()))
      (loop (multiple-value-bind (f next) (clgrpc.http2:decode-frame v :start pos)
              (unless f (return))
              (push f frames) (setf pos next)))
      (setf frames (nreverse frames))
      (is (= 4 (length frames)))
      (is (= (length v) pos))
      (is (= 7 (length (clgrpc.http2:frame-settings (first frames)))))
      (is (= 100 (- (clgrpc.http2:frame-data-end (second frames))
                    (clgrpc.http2:frame-data-start (second frames)))))
      (is (= 1000 (clgrpc.http2:frame-increment (third frames))))
      (is (string= "ENHANCE_YOUR_CALM" (clgrpc.http2:error-code-name
                                        (clgrpc.http2:frame-error-code (fourth frames))))))))

;;; ------------------------------------------------------------------
;;; malformed frames

(defmacro expect-h2-error ((code scope &optional (stream 0)) hex-string &rest keys)
  `(is (equal (list ,code ,scope ,stream)
              (h2-error (lambda () (h2-decode ,hex-string ,@keys))))
       "~A" ,hex-string))

(test malformed-length-and-size
  ;; larger than SETTINGS_MAX_FRAME_SIZE: rejected from the header alone
  (expect-h2-error ("FRAME_SIZE_ERROR" :connection) "004001000000000001")
  (is (eq :no-error (h2-error (lambda () (h2-decode "004001000000000001"
                                                    :max-frame-size 16385)))))
  (expect-h2-error ("FRAME_SIZE_ERROR" :connection) "ffffff040000000000")
  (expect-h2-error ("FRAME_SIZE_ERROR" :connection) "000003030000000001000008")
  (expect-h2-error ("FRAME_SIZE_ERROR" :connection) "0000050300000000010000000800")
  (expect-h2-error ("FRAME_SIZE_ERROR" :stream 3) "000004020000000003 00000001")
  (expect-h2-error ("FRAME_SIZE_ERROR" :connection) "000005040000000000 0003000000")
  (expect-h2-error ("FRAME_SIZE_ERROR" :connection) "000006040100000000 000300000064")
  (expect-h2-error ("FRAME_SIZE_ERROR" :connection) "00000706000000000001020304050607")
  (expect-h2-error ("FRAME_SIZE_ERROR" :connection) "000009060000000000010203040506070809")
  (expect-h2-error ("FRAME_SIZE_ERROR" :connection) "00000707000000000000000007000000")
  (expect-h2-error ("FRAME_SIZE_ERROR" :connection) "000003080000000000 000001")
  (expect-h2-error ("FRAME_SIZE_ERROR" :connection) "000005080000000000 0000000100")
  (expect-h2-error ("FRAME_SIZE_ERROR" :connection) "000003012000000001 800000")
  (expect-h2-error ("FRAME_SIZE_ERROR" :connection) "000003050400000001 000000"))

(test malformed-padding
  ;; pad length equal to / larger than the payload
  (expect-h2-error ("PROTOCOL_ERROR" :connection) "000003000800000001 036162")
  (expect-h2-error ("PROTOCOL_ERROR" :connection) "000003000800000001 ff6162")
  ;; PADDED with no room for the Pad Length octet
  (expect-h2-error ("FRAME_SIZE_ERROR" :connection) "000000000800000001")
  (expect-h2-error ("PROTOCOL_ERROR" :connection) "000003010c00000001 038286")
  ;; padded + priority: padding eats into the priority fields
  (expect-h2-error ("PROTOCOL_ERROR" :connection) "000007012800000001 02800000000f00")
  (expect-h2-error ("PROTOCOL_ERROR" :connection) "000006050c00000001 05000000 0282"))

(test malformed-stream-ids
  (expect-h2-error ("PROTOCOL_ERROR" :connection) "000001000000000000 00")
  (expect-h2-error ("PROTOCOL_ERROR" :connection) "000001010400000000 82")
  (expect-h2-error ("PROTOCOL_ERROR" :connection) "000005020000000000 000000010f")
  (expect-h2-error ("PROTOCOL_ERROR" :connection) "000004030000000000 00000008")
  (expect-h2-error ("PROTOCOL_ERROR" :connection) "000000040000000001")
  (expect-h2-error ("PROTOCOL_ERROR" :connection) "000005050400000000 0000000282")
  (expect-h2-error ("PROTOCOL_ERROR" :connection) "000008060000000001 0102030405060708")
  (expect-h2-error ("PROTOCOL_ERROR" :connection) "000008070000000003 0000000000000000")
  (expect-h2-error ("PROTOCOL_ERROR" :connection) "000001090400000000 82")
  ;; self-dependency is a stream error
  (expect-h2-error ("PROTOCOL_ERROR" :stream 3) "000005020000000003 000000030f")
  (expect-h2-error ("PROTOCOL_ERROR" :stream 3) "000006012400000003 000000030f82"))

(test malformed-settings-values
  (expect-h2-error ("PROTOCOL_ERROR" :connection) "000006040000000000 000200000002")
  (expect-h2-error ("FLOW_CONTROL_ERROR" :connection) "000006040000000000 000480000000")
  (expect-h2-error ("PROTOCOL_ERROR" :connection) "000006040000000000 000500003fff")
  (expect-h2-error ("PROTOCOL_ERROR" :connection) "000006040000000000 000501000000")
  ;; the boundaries themselves are fine, unknown identifiers are ignored
  (is (equal '((2 . 1) (4 . #x7fffffff) (5 . 16384) (5 . 16777215) (#xff . #xffffffff))
             (clgrpc.http2:frame-settings
              (h2-decode "00001e040000000000 000200000001 00047fffffff 000500004000
                          000500ffffff 00ffffffffff"))))
  (is (eq :no-error (h2-error (lambda () (clgrpc.http2:validate-setting 1 #xffffffff)))))
  (is (equal '("FLOW_CONTROL_ERROR" :connection 0)
             (h2-error (lambda () (clgrpc.http2:validate-setting 4 #x80000000))))))

(test malformed-window-update
  (expect-h2-error ("PROTOCOL_ERROR" :connection) "000004080000000000 00000000")
  (expect-h2-error ("PROTOCOL_ERROR" :stream 3) "000004080000000003 00000000")
  ;; only the reserved bit set: still an increment of 0
  (expect-h2-error ("PROTOCOL_ERROR" :stream 3) "000004080000000003 80000000"))

(test error-codes-table
  (is (string= "NO_ERROR" (clgrpc.http2:error-code-name 0)))
  (is (string= "HTTP_1_1_REQUIRED" (clgrpc.http2:error-code-name #xd)))
  (is (string= "UNKNOWN_ERROR_0xFF" (clgrpc.http2:error-code-name #xff)))
  (is (= clgrpc.http2:+compression-error+
         (clgrpc.http2:error-code-from-name "COMPRESSION_ERROR")))
  (is (string= "DATA" (clgrpc.http2:frame-type-name 0)))
  (let ((e (handler-case (clgrpc.http2:stream-error* 5 clgrpc.http2:+cancel+ "x")
             (clgrpc.http2:http2-error (c) c))))
    (is (= 5 (clgrpc.http2:http2-error-stream-id e)))
    (is-false (clgrpc.http2:http2-error-connection-p e))
    (is (search "CANCEL" (princ-to-string e)))))

(test random-frames-only-signal-http2-errors
  (let ((state (sb-ext:seed-random-state 99))
        (wrong 0))
    (dotimes (i 5000)
      (let* ((type (random 11 state))
             (len (random 12 state))
             (v (make-octets (+ 9 len))))
        (setf (aref v 2) len (aref v 3) type (aref v 4) (random 256 state)
              (aref v 8) (random 4 state))
        (loop for j from 9 below (length v) do (setf (aref v j) (random 256 state)))
        (handler-case (clgrpc.http2:decode-frame v)
          (clgrpc.http2:http2-error () nil)
          (error () (incf wrong)))))
    (is (= 0 wrong))))
