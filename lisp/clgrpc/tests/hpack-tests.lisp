;;;; HPACK tests: every example of RFC 7541 Appendix C (encoded bytes,
;;;; decoded header lists, dynamic table contents and size), plus malformed
;;;; input that must signal HPACK-ERROR and nothing else.

(in-package #:clgrpc.tests)

(def-suite :clgrpc.hpack :in :clgrpc)
(in-suite :clgrpc.hpack)

(defun hp-table (x)
  (etypecase x
    (clgrpc.hpack:decoder (clgrpc.hpack:decoder-table x))
    (clgrpc.hpack:encoder (clgrpc.hpack:encoder-table x))))

(defun headers-equal (a b)
  (and (= (length a) (length b))
       (every (lambda (x y) (and (string= (car x) (car y)) (string= (cdr x) (cdr y)))) a b)))

(defun decode-hex (decoder hex-string)
  (clgrpc.hpack:decode-header-block decoder (hex hex-string)))

(defun check-table (coder entries size)
  "ENTRIES newest first, as the RFC lists them."
  (let ((table (hp-table coder)))
    (is (headers-equal entries (clgrpc.hpack:dynamic-table-entries table))
        "table entries ~S, expected ~S" (clgrpc.hpack:dynamic-table-entries table) entries)
    (is (= size (clgrpc.hpack:dynamic-table-size table))
        "table size ~D, expected ~D" (clgrpc.hpack:dynamic-table-size table) size)))

(defun run-series (steps &key (table-size 4096) huffman)
  "Each step: (hex headers table-entries table-size).  Encodes HEADERS with a
fresh encoder sequence and decodes HEX with a decoder sequence, checking
both against the RFC."
  (let ((encoder (clgrpc.hpack:make-encoder :max-table-size table-size :huffman huffman
                                            :announce-size nil))
        (decoder (clgrpc.hpack:make-decoder :max-table-size table-size)))
    (loop for (hex-string headers entries size) in steps
          for i from 1
          do (let ((buf (make-obuf 16)))
               (clgrpc.hpack:encode-header-block encoder buf headers)
               (is (string= (octets-to-hex (hex hex-string)) (obuf-hex buf))
                   "step ~D encoded ~A" i (obuf-hex buf))
               (check-table encoder entries size))
             (let ((decoded (decode-hex decoder hex-string)))
               (is (headers-equal headers decoded) "step ~D decoded ~S" i decoded)
               (check-table decoder entries size)))))

;;; C.1 integers

(test c1-integer-representation
  (is (string= "0a" (with-obuf (b) (clgrpc.hpack:encode-integer b 10 5 0))))
  (is (string= "1f9a0a" (with-obuf (b) (clgrpc.hpack:encode-integer b 1337 5 0))))
  (is (string= "2a" (with-obuf (b) (clgrpc.hpack:encode-integer b 42 8 0))))
  (is (equal '(10 1) (multiple-value-list (clgrpc.hpack:decode-integer (hex "0a") 0 1 5))))
  (is (equal '(1337 3) (multiple-value-list (clgrpc.hpack:decode-integer (hex "1f9a0a") 0 3 5))))
  (is (equal '(42 1) (multiple-value-list (clgrpc.hpack:decode-integer (hex "2a") 0 1 8))))
  ;; prefix bits above the prefix are ignored by the decoder
  (is (= 10 (clgrpc.hpack:decode-integer (hex "ea") 0 1 5)))
  ;; boundary: exactly 2^N - 1 needs a zero continuation octet
  (is (string= "1f00" (with-obuf (b) (clgrpc.hpack:encode-integer b 31 5 0))))
  (is (= 31 (clgrpc.hpack:decode-integer (hex "1f00") 0 2 5))))

(test integer-roundtrip
  (dolist (prefix '(1 4 5 6 7 8))
    (dolist (v (list 0 1 30 31 126 127 128 255 256 16383 16384 1000000 #xffffffff))
      (let ((b (make-obuf 16)))
        (clgrpc.hpack:encode-integer b v prefix 0)
        (is (equal (list v (obuf-length b))
                   (multiple-value-list
                    (clgrpc.hpack:decode-integer (obuf-data b) 0 (obuf-length b) prefix))))))))

;;; C.2 individual representations

(test c2-1-literal-with-indexing
  (let ((enc (clgrpc.hpack:make-encoder :huffman nil))
        (dec (clgrpc.hpack:make-decoder))
        (hex "400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572"))
    (is (string= (octets-to-hex (hex hex))
                 (with-obuf (b) (clgrpc.hpack:encode-header enc b "custom-key" "custom-header"))))
    (is (headers-equal '(("custom-key" . "custom-header")) (decode-hex dec hex)))
    (check-table dec '(("custom-key" . "custom-header")) 55)
    (check-table enc '(("custom-key" . "custom-header")) 55)))

(test c2-2-literal-without-indexing
  (let ((enc (clgrpc.hpack:make-encoder :huffman nil))
        (dec (clgrpc.hpack:make-decoder))
        (hex "040c 2f73 616d 706c 652f 7061 7468"))
    (is (string= (octets-to-hex (hex hex))
                 (with-obuf (b) (clgrpc.hpack:encode-header enc b ":path" "/sample/path"
                                                            :indexing :without))))
    (is (headers-equal '((":path" . "/sample/path")) (decode-hex dec hex)))
    (check-table dec '() 0)
    (check-table enc '() 0)))

(test c2-3-literal-never-indexed
  (let ((enc (clgrpc.hpack:make-encoder :huffman nil))
        (dec (clgrpc.hpack:make-decoder))
        (hex "1008 7061 7373 776f 7264 0673 6563 7265 74"))
    (is (string= (octets-to-hex (hex hex))
                 (with-obuf (b) (clgrpc.hpack:encode-header enc b "password" "secret"
                                                            :indexing :never))))
    (is (headers-equal '(("password" . "secret")) (decode-hex dec hex)))
    (check-table dec '() 0)
    (check-table enc '() 0)))

(test c2-4-indexed
  (let ((enc (clgrpc.hpack:make-encoder :huffman nil))
        (dec (clgrpc.hpack:make-decoder)))
    (is (string= "82" (with-obuf (b) (clgrpc.hpack:encode-header enc b ":method" "GET"))))
    (is (headers-equal '((":method" . "GET")) (decode-hex dec "82")))
    (check-table dec '() 0)))

;;; C.3 / C.4 requests

(defparameter *request-headers*
  '(((":method" . "GET") (":scheme" . "http") (":path" . "/")
     (":authority" . "www.example.com"))
    ((":method" . "GET") (":scheme" . "http") (":path" . "/")
     (":authority" . "www.example.com") ("cache-control" . "no-cache"))
    ((":method" . "GET") (":scheme" . "https") (":path" . "/index.html")
     (":authority" . "www.example.com") ("custom-key" . "custom-value"))))

(defparameter *request-tables*
  '(((":authority" . "www.example.com"))
    (("cache-control" . "no-cache") (":authority" . "www.example.com"))
    (("custom-key" . "custom-value") ("cache-control" . "no-cache")
     (":authority" . "www.example.com"))))

(test c3-requests-without-huffman
  (run-series
   (mapcar #'list
           '("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d"
             "8286 84be 5808 6e6f 2d63 6163 6865"
             "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65")
           *request-headers* *request-tables* '(57 110 164))
   :huffman nil))

(test c4-requests-with-huffman
  (run-series
   (mapcar #'list
           '("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff"
             "8286 84be 5886 a8eb 1064 9cbf"
             "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf")
           *request-headers* *request-tables* '(57 110 164))
   :huffman t))

;;; C.5 / C.6 responses, table size 256 (evictions)

(defparameter *response-headers*
  '(((":status" . "302") ("cache-control" . "private")
     ("date" . "Mon, 21 Oct 2013 20:13:21 GMT") ("location" . "https://www.example.com"))
    ((":status" . "307") ("cache-control" . "private")
     ("date" . "Mon, 21 Oct 2013 20:13:21 GMT") ("location" . "https://www.example.com"))
    ((":status" . "200") ("cache-control" . "private")
     ("date" . "Mon, 21 Oct 2013 20:13:22 GMT") ("location" . "https://www.example.com")
     ("content-encoding" . "gzip")
     ("set-cookie" . "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"))))

(defparameter *response-tables*
  '((("location" . "https://www.example.com") ("date" . "Mon, 21 Oct 2013 20:13:21 GMT")
     ("cache-control" . "private") (":status" . "302"))
    ((":status" . "307") ("location" . "https://www.example.com")
     ("date" . "Mon, 21 Oct 2013 20:13:21 GMT") ("cache-control" . "private"))
    (("set-cookie" . "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1")
     ("content-encoding" . "gzip") ("date" . "Mon, 21 Oct 2013 20:13:22 GMT"))))

(test c5-responses-without-huffman
  (run-series
   (mapcar #'list
           '("4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133
              2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70
              6c65 2e63 6f6d"
             "4803 3330 37c1 c0bf"
             "88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d
              54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049
              5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e
              3d31")
           *response-headers* *response-tables* '(222 222 215))
   :table-size 256 :huffman nil))

(test c6-responses-with-huffman
  (run-series
   (mapcar #'list
           '("4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
              2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3"
             "4883 640e ffc1 c0bf"
             "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab
              77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
              9587 3160 65c0 03ed 4ee5 b106 3d50 07")
           *response-headers* *response-tables* '(222 222 215))
   :table-size 256 :huffman t))

;;; Huffman

(test huffman-roundtrip-all-octets
  (let* ((s (coerce (loop for i below 256 collect (code-char i)) 'string))
         (b (make-obuf 16)))
    (clgrpc.hpack:huffman-encode b s)
    (is (= (obuf-length b) (clgrpc.hpack:huffman-encoded-length s)))
    (let ((out (make-obuf 16)))
      (clgrpc.hpack:huffman-decode (obuf-data b) 0 (obuf-length b) out)
      (is (string= s (octets-to-latin1 (obuf-data out) 0 (obuf-fill out)))))))

(test huffman-known-strings
  (is (string= "f1e3c2e5f23a6ba0ab90f4ff"
               (with-obuf (b) (clgrpc.hpack:huffman-encode b "www.example.com"))))
  (is (string= "a8eb10649cbf" (with-obuf (b) (clgrpc.hpack:huffman-encode b "no-cache"))))
  (is (string= "" (with-obuf (b) (clgrpc.hpack:huffman-encode b "")))))

(defun huffman-decode-hex (hex-string)
  (let ((v (hex hex-string)) (out (make-obuf 16)))
    (clgrpc.hpack:huffman-decode v 0 (length v) out)
    (octets-to-latin1 (obuf-data out) 0 (obuf-fill out))))

(test huffman-rejects-bad-padding
  (is (string= "a" (huffman-decode-hex "1f")))   ; 'a' = 00011, pad 111
  ;; padding of zeros is not an EOS prefix
  (signals clgrpc.hpack:hpack-error (huffman-decode-hex "18"))
  ;; 8 or more bits of padding: a full octet of ones after a complete code
  (signals clgrpc.hpack:hpack-error (huffman-decode-hex "1fff"))
  ;; an explicit EOS (30 ones) inside the string
  (signals clgrpc.hpack:hpack-error (huffman-decode-hex "ffffffff")))

;;; Table behaviour

(test dynamic-table-eviction-and-sizes
  (let ((table (clgrpc.hpack:make-dynamic-table :max-size 100)))
    (clgrpc.hpack:dynamic-table-add table "a" "1")          ; 34
    (clgrpc.hpack:dynamic-table-add table "b" "2")          ; 68
    (is (= 68 (clgrpc.hpack:dynamic-table-size table)))
    (clgrpc.hpack:dynamic-table-add table "c" "3")          ; evicts a
    (is (headers-equal '(("c" . "3") ("b" . "2")) (clgrpc.hpack:dynamic-table-entries table)))
    (clgrpc.hpack:dynamic-table-resize table 40)
    (is (headers-equal '(("c" . "3")) (clgrpc.hpack:dynamic-table-entries table)))
    ;; entry larger than the table empties it (RFC 7541 4.4)
    (clgrpc.hpack:dynamic-table-add table "big" (make-string 20 :initial-element #\x))
    (is (= 0 (clgrpc.hpack:dynamic-table-length table)))
    (is (= 0 (clgrpc.hpack:dynamic-table-size table)))
    ;; many insertions through the ring keep order
    (clgrpc.hpack:dynamic-table-resize table 4096)
    (dotimes (i 500) (clgrpc.hpack:dynamic-table-add table "k" (format nil "~3,'0D" i)))
    (is (string= "499" (cdr (clgrpc.hpack:dynamic-table-entry table 1))))
    (is (<= (clgrpc.hpack:dynamic-table-size table) 4096))
    (is (= (* 36 (clgrpc.hpack:dynamic-table-length table))
           (clgrpc.hpack:dynamic-table-size table)))))

(test encoder-uses-dynamic-table
  (let ((enc (clgrpc.hpack:make-encoder :huffman nil))
        (dec (clgrpc.hpack:make-decoder)))
    (dotimes (round 3)
      (let ((b (make-obuf 16))
            (headers '((":status" . "200") ("content-type" . "application/grpc")
                       ("grpc-status" . "0") ("x-custom" . "v"))))
        (clgrpc.hpack:encode-header-block enc b headers)
        (when (plusp round)
          ;; all four fields are now exact matches: one octet each
          (is (= 4 (obuf-length b))))
        (is (headers-equal headers (clgrpc.hpack:decode-header-block dec (obuf-contents b))))))))

(test encoder-announces-table-size-changes
  (let ((enc (clgrpc.hpack:make-encoder :huffman nil))
        (dec (clgrpc.hpack:make-decoder)))
    (flet ((block-hex (headers)
             (let ((b (make-obuf 16)))
               (clgrpc.hpack:encode-header-block enc b headers)
               (is (headers-equal headers (clgrpc.hpack:decode-header-block dec (obuf-contents b))))
               (obuf-hex b))))
      (block-hex '(("x-a" . "1")))
      ;; shrink to 0 then back to 4096 before the next block: both announced
      (clgrpc.hpack:encoder-set-max-table-size enc 0)
      (clgrpc.hpack:encoder-set-max-table-size enc 4096)
      (let ((h (block-hex '(("x-a" . "1")))))
        (is (string= "203fe11f" (subseq h 0 8)) "min then final update, got ~A" h))
      (is (= 1 (clgrpc.hpack:dynamic-table-length (hp-table dec)))))))

(test encoder-non-default-size-is-announced
  (let ((enc (clgrpc.hpack:make-encoder :max-table-size 256 :huffman nil)))
    (is (string= "3fe101" (with-obuf (b) (clgrpc.hpack:encode-header-block enc b '()))))))

;;; Malformed input

(defun decode-fails (hex-string &key (decoder (clgrpc.hpack:make-decoder)))
  (handler-case (progn (decode-hex decoder hex-string) :no-error)
    (clgrpc.hpack:hpack-error () :hpack-error)
    (error (e) (list :wrong-condition (type-of e)))))

(test malformed-blocks-signal-hpack-error
  (dolist (bad '("80"                   ; index 0
                 "be"                   ; dynamic index with empty table
                 "ff80808080808080"     ; integer too long
                 "7f"                   ; truncated integer
                 "ff"                   ; truncated integer, 7-bit prefix
                 "400a6375"             ; name literal longer than block
                 "4001"                 ; truncated value
                 "40"                   ; literal with no name
                 "0085"                 ; Huffman name truncated
                 "4081ff0161"           ; Huffman name is EOS prefix > 7 bits
                 "408118"               ; bad Huffman padding
                 "3fe21f"               ; size update 4097 > limit 4096
                 "823f00"               ; size update after a field
                 "ffffffffff0f"))       ; integer > 2^32
    (is (eq :hpack-error (decode-fails bad)) "~A gave ~S" bad (decode-fails bad))))

(test decoder-size-update-within-limit
  (let ((dec (clgrpc.hpack:make-decoder)))
    (decode-hex dec "4003 782d 6101 31")  ; x-a: 1
    (is (= 1 (clgrpc.hpack:dynamic-table-length (hp-table dec))))
    (decode-hex dec "20")                   ; size update to 0
    (is (= 0 (clgrpc.hpack:dynamic-table-length (hp-table dec))))
    (decode-hex dec "3fe11f")               ; back to 4096
    (is (= 4096 (clgrpc.hpack:dynamic-table-max-size (hp-table dec))))))

(test decoder-requires-update-after-limit-decrease
  (let ((dec (clgrpc.hpack:make-decoder)))
    (clgrpc.hpack:decoder-set-max-table-size-limit dec 100)
    (is (eq :hpack-error (decode-fails "82" :decoder dec)))
    (let ((dec (clgrpc.hpack:make-decoder)))
      (clgrpc.hpack:decoder-set-max-table-size-limit dec 100)
      (is (headers-equal '((":method" . "GET")) (decode-hex dec "3f4582")))
      (is (= 100 (clgrpc.hpack:dynamic-table-max-size (hp-table dec)))))))

(test decoder-random-garbage-never-crashes
  ;; Fuzz: arbitrary octets must decode or signal HPACK-ERROR, nothing else.
  (let ((state (sb-ext:seed-random-state 42))
        (wrong 0))
    (dotimes (i 3000)
      (let* ((n (random 24 state))
             (v (make-octets n)))
        (dotimes (j n) (setf (aref v j) (random 256 state)))
        (handler-case (clgrpc.hpack:decode-header-block (clgrpc.hpack:make-decoder) v)
          (clgrpc.hpack:hpack-error () nil)
          (error () (incf wrong)))))
    (is (= 0 wrong))))

(test decoded-header-list-size
  (multiple-value-bind (headers size)
      (decode-hex (clgrpc.hpack:make-decoder) "8286")
    (is (= 2 (length headers)))
    (is (= (+ 7 3 32 7 4 32) size))))

(test mutated-rfc-blocks-only-signal-hpack-errors
  ;; Flip octets of the Appendix C blocks (Huffman and plain, with a small
  ;; table so eviction paths run): decode or HPACK-ERROR, nothing else.
  (let ((blocks (mapcar #'hex
                        '("4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81
                           66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3"
                          "4883 640e ffc1 c0bf"
                          "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf"
                          "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420
                           3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77
                           7777 2e65 7861 6d70 6c65 2e63 6f6d")))
        (state (sb-ext:seed-random-state 11))
        (wrong '()))
    (dotimes (i 3000)
      (let ((dec (clgrpc.hpack:make-decoder :max-table-size 256)))
        (dolist (b blocks)
          (let ((v (copy-seq b)))
            (setf (aref v (random (length v) state)) (random 256 state))
            (handler-case (clgrpc.hpack:decode-header-block dec v)
              (clgrpc.hpack:hpack-error () nil)
              (error (e) (push (type-of e) wrong)))))))
    (is (null wrong) "unexpected conditions: ~S" (remove-duplicates wrong))))

(test encoder-decoder-stay-in-sync
  ;; Random header lists, indexing modes, Huffman policies and table-size
  ;; changes over one long connection: every block must decode to its input
  ;; and both dynamic tables must stay identical.
  (let* ((state (sb-ext:seed-random-state 5))
         (names #("content-type" ":status" "grpc-status" "x-a" "x-long-header-name" "date"
                  "grpc-message" "user-agent"))
         (values #("application/grpc" "200" "0" "" "v" "a much longer value to force evictions"
                   "Mon, 21 Oct 2013 20:13:21 GMT"))
         (huff #(:auto t nil))
         (enc (clgrpc.hpack:make-encoder))
         (dec (clgrpc.hpack:make-decoder))
         (failures 0))
    (flet ((pick (v) (aref v (random (length v) state))))
      (dotimes (round 500)
        (when (zerop (random 10 state))
          ;; peer (our decoder) advertises a new SETTINGS_HEADER_TABLE_SIZE
          (let ((size (pick #(0 64 256 4096 100))))
            (clgrpc.hpack:decoder-set-max-table-size-limit dec size)
            (clgrpc.hpack:encoder-set-max-table-size enc size)))
        (setf (clgrpc.hpack:encoder-huffman enc) (pick huff))
        (let ((headers (loop repeat (random 8 state)
                             collect (list (pick names)
                                           (if (zerop (random 4 state))
                                               (format nil "r~D" (random 1000 state))
                                               (pick values))
                                           (pick #(:incremental :incremental :without :never)))))
              (b (make-obuf 64)))
          (clgrpc.hpack:encode-header-block enc b headers)
          (let ((decoded (handler-case (clgrpc.hpack:decode-header-block dec (obuf-contents b))
                           (clgrpc.hpack:hpack-error (e) (list :error e)))))
            (unless (and (headers-equal (mapcar (lambda (h) (cons (first h) (second h))) headers)
                                        decoded)
                         (headers-equal (clgrpc.hpack:dynamic-table-entries (hp-table enc))
                                        (clgrpc.hpack:dynamic-table-entries (hp-table dec)))
                         (= (clgrpc.hpack:dynamic-table-size (hp-table enc))
                            (clgrpc.hpack:dynamic-table-size (hp-table dec))))
              (incf failures))))))
    (is (= 0 failures))))

(test failed-encode-writes-nothing
  ;; A field that is not an octet string is refused before anything is
  ;; written or indexed: the peer's decoder never sees half a block, and
  ;; the next block encodes as if the bad one had never been tried.
  (let ((encoder (clgrpc.hpack:make-encoder))
        (buf (make-obuf 64)))
    (signals clgrpc.hpack:hpack-error
      (clgrpc.hpack:encode-header-block encoder buf (list '("x-good" . "1")
                                                          (cons "x-bad" (string (code-char 300))))))
    (is (zerop (obuf-length buf)))
    (is (zerop (clgrpc.hpack:dynamic-table-size (clgrpc.hpack:encoder-table encoder))))
    (clgrpc.hpack:encode-header-block encoder buf '(("x-good" . "1")))
    (is (equal '(("x-good" . "1"))
               (clgrpc.hpack:decode-header-block (clgrpc.hpack:make-decoder)
                                                 (obuf-data buf) 0 (obuf-length buf))))))

(test header-list-past-the-limit-is-not-collected
  ;; A block is always decoded to its end (the table must stay in step),
  ;; but past the decoder's header list limit its fields are not kept.
  (let* ((enc (clgrpc.hpack:make-encoder))
         (b (make-obuf 256))
         (headers (loop for i below 50 collect (cons (format nil "x-~D" i) (make-string 100 :initial-element #\v)))))
    (clgrpc.hpack:encode-header-block enc b headers)
    (let ((limited (clgrpc.hpack:make-decoder :max-list-size 1000))
          (unlimited (clgrpc.hpack:make-decoder)))
      (multiple-value-bind (kept size) (clgrpc.hpack:decode-header-block limited (obuf-contents b))
        (is (< (length kept) 10))
        (is (= size (loop for (n . v) in headers sum (+ 32 (length n) (length v))))))
      (is (= 50 (length (clgrpc.hpack:decode-header-block unlimited (obuf-contents b)))))
      ;; The table is in step: the same fields again, now indexed, decode the same.
      (obuf-reset b)
      (clgrpc.hpack:encode-header-block enc b (subseq headers 0 3))
      (is (equal (subseq headers 0 3)
                 (clgrpc.hpack:decode-header-block limited (obuf-contents b)))))))
