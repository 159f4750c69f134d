;;;; SHA-256 (FIPS 180-4) of a file, so that the Lisp load generator's results
;;;; name the binaries they measured as the Go one's do.  SBCL ships MD5 only
;;;; (sb-md5), and one digest of a few files per run does not justify a
;;;; cryptography library: this is the textbook algorithm on 32-bit words.

(in-package #:routeguide)

(deftype u32 () '(unsigned-byte 32))

(defparameter *sha256-k*
  (make-array 64 :element-type 'u32 :initial-contents
              '(#x428a2f98 #x71374491 #xb5c0fbcf #xe9b5dba5 #x3956c25b #x59f111f1 #x923f82a4 #xab1c5ed5
                #xd807aa98 #x12835b01 #x243185be #x550c7dc3 #x72be5d74 #x80deb1fe #x9bdc06a7 #xc19bf174
                #xe49b69c1 #xefbe4786 #x0fc19dc6 #x240ca1cc #x2de92c6f #x4a7484aa #x5cb0a9dc #x76f988da
                #x983e5152 #xa831c66d #xb00327c8 #xbf597fc7 #xc6e00bf3 #xd5a79147 #x06ca6351 #x14292967
                #x27b70a85 #x2e1b2138 #x4d2c6dfc #x53380d13 #x650a7354 #x766a0abb #x81c2c92e #x92722c85
                #xa2bfe8a1 #xa81a664b #xc24b8b70 #xc76c51a3 #xd192e819 #xd6990624 #xf40e3585 #x106aa070
                #x19a4c116 #x1e376c08 #x2748774c #x34b0bcb5 #x391c0cb3 #x4ed8aa4a #x5b9cca4f #x682e6ff3
                #x748f82ee #x78a5636f #x84c87814 #x8cc70208 #x90befffa #xa4506ceb #xbef9a3f7 #xc67178f2))
  "The first 32 bits of the fractional parts of the cube roots of the first 64 primes.")

(declaim (inline rotr32))
(defun rotr32 (x n)
  (declare (type u32 x) (type (integer 1 31) n))
  (logior (ash x (- n)) (ldb (byte 32 0) (ash x (- 32 n)))))

(defun sha256-blocks (h data end w)
  "Fold the 64-byte blocks of DATA below END into the state H; W is scratch."
  (declare (type (simple-array u32 (8)) h) (type (simple-array u32 (64)) w)
           (type (simple-array (unsigned-byte 8) (*)) data) (type fixnum end)
           (optimize speed (safety 0)))
  (let ((k *sha256-k*))
    (declare (type (simple-array u32 (64)) k))
    (loop for start of-type fixnum from 0 below end by 64 do
      (dotimes (i 16)
        (let ((j (+ start (* 4 i))))
          (setf (aref w i) (logior (ash (aref data j) 24) (ash (aref data (+ j 1)) 16)
                                   (ash (aref data (+ j 2)) 8) (aref data (+ j 3))))))
      (loop for i from 16 below 64 do
        (let* ((w15 (aref w (- i 15))) (w2 (aref w (- i 2)))
               (s0 (logxor (rotr32 w15 7) (rotr32 w15 18) (ash w15 -3)))
               (s1 (logxor (rotr32 w2 17) (rotr32 w2 19) (ash w2 -10))))
          (setf (aref w i) (ldb (byte 32 0) (+ (aref w (- i 16)) s0 (aref w (- i 7)) s1)))))
      (let ((a (aref h 0)) (b (aref h 1)) (c (aref h 2)) (d (aref h 3))
            (e (aref h 4)) (f (aref h 5)) (g (aref h 6)) (hh (aref h 7)))
        (declare (type u32 a b c d e f g hh))
        (dotimes (i 64)
          (let* ((t1 (ldb (byte 32 0)
                          (+ hh (logxor (rotr32 e 6) (rotr32 e 11) (rotr32 e 25))
                             (logxor (logand e f) (logand (logxor e #xffffffff) g))
                             (aref k i) (aref w i))))
                 (t2 (ldb (byte 32 0)
                          (+ (logxor (rotr32 a 2) (rotr32 a 13) (rotr32 a 22))
                             (logxor (logand a b) (logand a c) (logand b c))))))
            (setf hh g g f f e e (ldb (byte 32 0) (+ d t1))
                  d c c b b a a (ldb (byte 32 0) (+ t1 t2)))))
        (setf (aref h 0) (ldb (byte 32 0) (+ (aref h 0) a)) (aref h 1) (ldb (byte 32 0) (+ (aref h 1) b))
              (aref h 2) (ldb (byte 32 0) (+ (aref h 2) c)) (aref h 3) (ldb (byte 32 0) (+ (aref h 3) d))
              (aref h 4) (ldb (byte 32 0) (+ (aref h 4) e)) (aref h 5) (ldb (byte 32 0) (+ (aref h 5) f))
              (aref h 6) (ldb (byte 32 0) (+ (aref h 6) g)) (aref h 7) (ldb (byte 32 0) (+ (aref h 7) hh)))))))

(defun file-sha256 (path)
  "The SHA-256 of the file at PATH as 64 lowercase hex digits, or NIL if it
cannot be read."
  (let ((h (make-array 8 :element-type 'u32
                         :initial-contents '(#x6a09e667 #xbb67ae85 #x3c6ef372 #xa54ff53a
                                             #x510e527f #x9b05688c #x1f83d9ab #x5be0cd19)))
        (w (make-array 64 :element-type 'u32))
        ;; A multiple of 64, and room for the padding after the last byte.
        (buffer (make-array (+ 65536 128) :element-type '(unsigned-byte 8)))
        (total 0))
    (handler-case
        (with-open-file (in path :element-type '(unsigned-byte 8))
          (loop
            (let ((n (read-sequence buffer in :end 65536)))
              (incf total n)
              (when (< n 65536)
                ;; The last block(s): a 1 bit, zeros, and the length in bits
                ;; as 64 big-endian bits, to a multiple of 64 bytes.
                (let ((end (* 64 (ceiling (+ n 9) 64))))
                  (fill buffer 0 :start n :end end)
                  (setf (aref buffer n) #x80)
                  (loop for i from 0 below 8
                        do (setf (aref buffer (- end 1 i)) (ldb (byte 8 (* 8 i)) (* 8 total))))
                  (sha256-blocks h buffer end w)
                  (return)))
              (sha256-blocks h buffer n w)))
          (format nil "~(~{~8,'0x~}~)" (coerce h 'list)))
      (file-error () nil)
      (stream-error () nil))))
