;;;; gzip inflation of compressed gRPC messages (grpc/compression.lisp, on
;;;; chipz), with the receive limit the call would give it.  GRPC-ERROR is
;;;; the documented rejection (INTERNAL for bad data, RESOURCE_EXHAUSTED past
;;;; the limit).

(in-package #:clgrpc.fuzz)

(defconstant +gzip-limit+ 65536
  "The inflation limit: small, so that bombs reach it in microseconds.")

(defun run-gzip (octets)
  (let ((plain (clgrpc.grpc::gunzip-octets octets 0 (length octets) +gzip-limit+)))
    (check (<= (length plain) +gzip-limit+) "inflated to ~D octets, over the limit" (length plain))))

(defun gzip-of (octets)
  (clgrpc.grpc::gzip-octets octets 0 (length octets)))

(defun gzip-with-header-fields (octets)
  "OCTETS gzipped with every optional header field (RFC 1952 2.3: FEXTRA,
FNAME, FCOMMENT, FHCRC), which salza2 never writes."
  (let ((plain (gzip-of octets)))
    (concatenate 'octets
                 (octets-from #x1f #x8b 8 #x1e 0 0 0 0 0 3
                              4 0 "ab" 2 0     ; FEXTRA: 4 octets, one subfield
                              "name" 0 "comment" 0
                              #x12 #x34)      ; FHCRC (not checked by readers)
                 (subseq plain 10))))

(defun gzip-seeds ()
  (let ((text (octets-from "hello, hello, hello, gRPC over HTTP/2 ")))
    (list (cons "empty" (gzip-of (make-octets 0)))
          (cons "text" (gzip-of text))
          ;; Long runs: back-references and the dynamic Huffman tables.
          (cons "repetitive" (gzip-of (coerce (loop repeat 40 append (coerce text 'list)) 'octets)))
          ;; Incompressible: stored blocks.
          (cons "random" (gzip-of (let ((*random* (sb-ext:seed-random-state 1)))
                                    (random-octets 300))))
          ;; Inflates to 128 KiB, twice the limit.
          (cons "bomb" (gzip-of (make-octets 131072)))
          (cons "header-fields" (gzip-with-header-fields text))
          ;; Two members back to back.
          (cons "two-members" (concatenate 'octets (gzip-of text) (gzip-of text))))))

(define-target "gzip"
  :files '((:chipz . "inflate.lisp")
           (:clgrpc . "src/grpc/compression.lisp"))
  :run #'run-gzip
  :expected '(clgrpc.grpc:grpc-error)
  :seeds #'gzip-seeds
  :max-length 4096
  ;; The output (up to the limit) and the inflater's 16 KiB chunk, in
  ;; buffers that double: a few times the limit.
  :allocation-budget (lambda (n) (+ (* 8 +gzip-limit+) (* 1024 1024) (* 256 n)))
  ;; The gzip magic with method and flags, block headers (stored, fixed,
  ;; dynamic, final or not), a stored block's length and its complement.
  :tokens (list (octets-from #x1f #x8b 8 0) (octets-from #x1f #x8b 8 #x1f) (octets-from 1 0 0 #xff #xff)
                (octets-from 0 5 0 #xfa #xff) (octets-from 3) (octets-from 5) (octets-from 4)
                (octets-from #xff #xff #xff #xff)))
