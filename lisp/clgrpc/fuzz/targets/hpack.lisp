;;;; HPACK (RFC 7541): header blocks decoded one after the other by one
;;;; decoder, so that the dynamic table carries state from block to block as
;;;; on a connection.
;;;;
;;;;   config (1) | block-length (2, big-endian) | block | block-length | block ...
;;;;
;;;; CONFIG's low two bits choose the table size we advertise; bit 2 lowers
;;;; that limit after the first block, so the next block must begin with a
;;;; size update (4.2).  A length past the end takes what is left.
;;;; HPACK-ERROR is the documented rejection.

(in-package #:clgrpc.fuzz)

(defparameter *hpack-table-sizes* #(4096 256 0 65536))

(defun check-table (table)
  "RFC 7541 4.1: the size is the entries' sizes summed, and within the maximum."
  (let ((sum (loop for (name . value) in (clgrpc.hpack:dynamic-table-entries table)
                   sum (clgrpc.hpack:header-entry-size name value))))
    (check (= sum (clgrpc.hpack:dynamic-table-size table))
           "table size ~D, its entries sum to ~D" (clgrpc.hpack:dynamic-table-size table) sum)
    (check (<= sum (clgrpc.hpack:dynamic-table-max-size table))
           "table size ~D over its maximum ~D" sum (clgrpc.hpack:dynamic-table-max-size table))))

(defun run-hpack (octets)
  (when (plusp (length octets))
    (let* ((config (aref octets 0))
           (size (aref *hpack-table-sizes* (ldb (byte 2 0) config)))
           ;; A list size limit that inputs of a few kilobytes can pass,
           ;; indexing a large entry over and over.
           (decoder (clgrpc.hpack:make-decoder :max-table-size size :max-list-size 8192))
           (pos 1))
      (loop for n from 0
            while (< pos (length octets))
            do (let* ((length (if (< (1+ pos) (length octets)) (read-u16 octets pos) 0))
                      (start (min (length octets) (+ pos 2)))
                      (end (min (length octets) (+ start length))))
                 (when (and (= n 1) (logbitp 2 config))
                   (clgrpc.hpack:decoder-set-max-table-size-limit decoder (floor size 2)))
                 (multiple-value-bind (headers list-size)
                     (clgrpc.hpack:decode-header-block decoder octets start end)
                   (check (<= (loop for (name . value) in headers
                                    sum (+ (length name) (length value) 32))
                              list-size)
                          "headers collected beyond the list size ~D" list-size))
                 (check-table (clgrpc.hpack:decoder-table decoder))
                 (setf pos end))))))

(defun hpack-input (config blocks)
  (with-obuf-contents (buf)
    (obuf-write-u8 buf config)
    (dolist (b blocks)
      (obuf-write-u16 buf (length b))
      (obuf-write-bytes buf b))))

(defun encode-blocks (encoder header-lists)
  (loop for headers in header-lists
        collect (with-obuf-contents (buf)
                  (clgrpc.hpack:encode-header-block encoder buf headers))))

(defparameter *seed-requests*
  '(((":method" . "POST") (":scheme" . "http") (":path" . "/routeguide.RouteGuide/GetFeature")
     (":authority" . "localhost:50051") ("content-type" . "application/grpc")
     ("te" . "trailers") ("grpc-timeout" . "1S") ("grpc-encoding" . "gzip")
     ("user-agent" . "grpc-go/1.60.0"))
    ((":method" . "POST") (":scheme" . "http") (":path" . "/routeguide.RouteGuide/ListFeatures")
     (":authority" . "localhost:50051") ("content-type" . "application/grpc")
     ("te" . "trailers") ("x-custom-bin" . "AAEC") ("cookie" . "a=b")
     ("authorization" "secret" :never))
    ((":status" . "200") ("content-type" . "application/grpc") ("grpc-status" . "0")
     ("grpc-message" "a long status message, not worth indexing" :without)))
  "Header lists of requests and responses: what a gRPC peer sends.")

(defun hpack-seeds ()
  (append
   (loop for huffman in '(nil t :auto)
         for name in '("plain" "huffman" "auto")
         collect (cons (concatenate 'string "requests-" name)
                       (hpack-input 0 (encode-blocks (clgrpc.hpack:make-encoder :huffman huffman)
                                                     *seed-requests*))))
   (list
    ;; Our encoder at a table size other than 4096 announces it first.
    (cons "table-256" (hpack-input 1 (encode-blocks (clgrpc.hpack:make-encoder :max-table-size 256)
                                                    *seed-requests*)))
    (cons "table-0" (hpack-input 2 (encode-blocks (clgrpc.hpack:make-encoder :max-table-size 0)
                                                  *seed-requests*)))
    (cons "limit-lowered"
          (let ((encoder (clgrpc.hpack:make-encoder)))
            (hpack-input 4 (append (encode-blocks encoder (list (first *seed-requests*)))
                                   (progn (clgrpc.hpack:encoder-set-max-table-size encoder 2048)
                                          (encode-blocks encoder (rest *seed-requests*)))))))
    ;; RFC 7541 C.2.1 and C.4.1: a literal with indexing, a Huffman request.
    (cons "rfc-c2-c4"
          (hpack-input 0 (list (hex-to-octets "400a637573746f6d2d6b65790d637573746f6d2d686561646572")
                               (hex-to-octets "828684418cf1e3c2e5f23a6ba0ab90f4ff")))))))

(define-target "hpack"
  :files '((:clgrpc . "src/hpack/integer.lisp")
           (:clgrpc . "src/hpack/huffman.lisp")
           (:clgrpc . "src/hpack/dynamic-table.lisp")
           (:clgrpc . "src/hpack/decoder.lisp"))
  :run #'run-hpack
  :expected '(clgrpc.hpack:hpack-error)
  :seeds #'hpack-seeds
  :max-length 2048
  ;; Representation prefixes, a maximal prefix and its continuation octets
  ;; (integers), the static table's indices, a size update.
  :tokens (list (octets-from #x7f #xff #xff #xff #x0f) (octets-from #x1f #xe1 #x1f)
                (octets-from #x3f #xe1 #x1f) (octets-from #xbe) (octets-from #xc0)
                (octets-from #xff #x80 #x80 #x80 #x80 #x01) (octets-from #x40 #x81 #xff)
                (octets-from #x10 #x01 "a" #x01 "b") (octets-from #x00 #x81 #x1f #x81 #x1f)))
