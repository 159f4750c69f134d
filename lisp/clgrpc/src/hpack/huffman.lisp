;;;; HPACK Huffman coding, RFC 7541 section 5.2 and Appendix B.
;;;;
;;;; Encoding packs codes into a small bit accumulator (longest code is 30
;;;; bits, so 7 pending bits + 30 always fit a fixnum).
;;;;
;;;; Decoding is table driven, one input OCTET per step: the states are the
;;;; 256 internal nodes of the code tree, and for every (state, octet) pair
;;;; a precomputed 32-bit entry gives the next state and the 0, 1 or 2
;;;; symbols completed on the way (the shortest code is 5 bits, so 8 bits can
;;;; finish at most two).  That is one array load per octet instead of eight
;;;; tree steps.  The 64K-entry table (256 KiB) is built once at load time
;;;; from the code list.
;;;;
;;;; Padding rules (5.2): the final partial code must be a prefix of EOS
;;;; (all ones) and shorter than 8 bits, and EOS itself must never be
;;;; decoded.  A state is "accepting" when it is the root or lies on the
;;;; all-ones path at depth 1..7.

(in-package #:clgrpc.hpack)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +huffman-eos+ 256)

(declaim (type (simple-array (unsigned-byte 32) (257)) +huffman-codes+)
         (type (simple-array (unsigned-byte 8) (257)) +huffman-lengths+))
(sb-ext:defglobal +huffman-codes+
    (let ((v (make-array 257 :element-type '(unsigned-byte 32))))
      (loop for (code . nil) in +huffman-code-list+ for i from 0
            do (setf (aref v i) code))
      v))
(sb-ext:defglobal +huffman-lengths+
    (let ((v (make-array 257 :element-type '(unsigned-byte 8))))
      (loop for (nil . len) in +huffman-code-list+ for i from 0
            do (setf (aref v i) len))
      v))

;;; Decode-table entry layout (unsigned-byte 32):
;;;   bits 0-7   next state
;;;   bits 8-9   number of symbols emitted (0..2)
;;;   bits 10-17 first symbol
;;;   bits 18-25 second symbol
;;;   bit  26    failure: EOS was decoded
(defconstant +huff-fail-bit+ 26)

(defun build-huffman-decoder ()
  "Returns (values transition-table accepting-states)."
  ;; Tree: node 0 is the root; CHILD holds 2 slots per node, each either an
  ;; internal node number (>= 0) or -(symbol + 1) for a leaf.
  (let ((child (make-array 512 :element-type 'fixnum :initial-element 0))
        (depth (make-array 256 :element-type 'fixnum :initial-element 0))
        (next-node 1))
    (dotimes (sym 257)
      (let ((code (aref +huffman-codes+ sym))
            (len (aref +huffman-lengths+ sym))
            (node 0))
        (loop for bit from (1- len) downto 0
              for d from 1
              for slot = (+ (* 2 node) (ldb (byte 1 bit) code))
              do (if (zerop bit)
                     (setf (aref child slot) (- (1+ sym)))
                     (let ((c (aref child slot)))
                       (when (zerop c)
                         (setf c next-node
                               (aref child slot) next-node
                               (aref depth next-node) d)
                         (incf next-node))
                       (setf node c))))))
    (assert (= next-node 256))          ; a complete code over 257 symbols
    (let ((table (make-array 65536 :element-type '(unsigned-byte 32)))
          (accept (make-array 256 :element-type 'bit :initial-element 0)))
      ;; Accepting states: root and the all-ones path down to depth 7.
      (setf (aref accept 0) 1)
      (let ((node 0))
        (loop for d from 1 to 7
              do (setf node (aref child (+ (* 2 node) 1)))
                 (setf (aref accept node) 1)))
      (dotimes (state 256)
        (dotimes (octet 256)
          (let ((node state) (nsyms 0) (syms (list)) (fail nil))
            (loop for bit from 7 downto 0
                  for c = (aref child (+ (* 2 node) (ldb (byte 1 bit) octet)))
                  do (cond ((>= c 0) (setf node c))
                           ((= c (- (1+ +huffman-eos+)))
                            (setf fail t node 0))
                           (t (push (- (1+ c)) syms)
                              (incf nsyms)
                              (setf node 0))))
            (setf syms (nreverse syms))
            (setf (aref table (+ (* state 256) octet))
                  (logior node
                          (ash nsyms 8)
                          (ash (or (first syms) 0) 10)
                          (ash (or (second syms) 0) 18)
                          (if fail (ash 1 +huff-fail-bit+) 0))))))
      (values table accept))))

(declaim (type (simple-array (unsigned-byte 32) (65536)) +huffman-decode-table+)
         (type (simple-bit-vector 256) +huffman-accepting+))
(sb-ext:defglobal +huffman-decode-table+ (make-array 65536 :element-type '(unsigned-byte 32)))
(sb-ext:defglobal +huffman-accepting+ (make-array 256 :element-type 'bit))
(multiple-value-bind (table accept) (build-huffman-decoder)
  (setf +huffman-decode-table+ table
        +huffman-accepting+ accept))

;;; ------------------------------------------------------------------
;;; Encoding

(defmacro with-simple-string ((var string) &body body)
  "Run BODY with VAR bound to STRING as a simple string, specialised for the
two simple string representations so SCHAR compiles to a direct load."
  `(let ((,var (if (simple-string-p ,string) ,string (coerce ,string 'simple-string))))
     (etypecase ,var
       ((simple-array character (*)) ,@body)
       (simple-base-string ,@body))))

(defun huffman-encoded-length (string)
  "Octets STRING occupies when Huffman coded.  Characters must be < 256."
  (declare (type string string))
  (let ((bits 0))
    (declare (type (unsigned-byte 62) bits))
    (with-simple-string (s string)
      (dotimes (i (length s))
        (let ((code (char-code (schar s i))))
          (unless (< code 256) (error "character ~S is not an octet" (schar s i)))
          (incf bits (aref +huffman-lengths+ code)))))
    (ceiling bits 8)))

(defun huffman-encode (buf string)
  "Append the Huffman coding of STRING (no length prefix), padded with the
EOS prefix (all ones) to an octet boundary."
  (declare (type obuf buf) (type string string))
  ;; Reserve the worst case (30 bits per symbol) instead of a sizing pass.
  (let* ((data (obuf-ensure buf (* 4 (length string))))
         (pos (obuf-fill buf))
         (acc 0)                        ; pending bits, fewer than 8
         (nbits 0))
    (declare (type index pos) (type (unsigned-byte 7) acc) (type (integer 0 7) nbits))
    (with-simple-string (s string)
      (dotimes (i (length s))
        (let* ((sym (char-code (schar s i)))
               (len (the (integer 5 30) (aref +huffman-lengths+ sym)))
               (bits (logior (ash acc len) (aref +huffman-codes+ sym)))
               (total (+ nbits len)))
          (declare (type (unsigned-byte 37) bits) (type (integer 0 37) total))
          (loop while (>= total 8)
                do (decf total 8)
                   (setf (aref data pos) (logand (ash bits (- total)) #xff))
                   (incf pos))
          (setf nbits total
                acc (logand bits (1- (ash 1 total)))))))
    (when (plusp nbits)
      (setf (aref data pos)
            (logior (ash acc (- 8 nbits)) (ldb (byte (- 8 nbits) 0) #xff)))
      (incf pos))
    (setf (obuf-fill buf) pos)
    buf))

;;; ------------------------------------------------------------------
;;; Decoding

(defun huffman-decode (octets start end out)
  "Decode the Huffman string OCTETS[START,END), appending the octets to OBUF
OUT.  Signals HPACK-ERROR on EOS or invalid padding."
  (declare (type octets octets) (type index start end) (type obuf out))
  (let* ((table +huffman-decode-table+)
         ;; Each input octet yields at most 2 symbols: reserve once.
         (data (obuf-ensure out (* 2 (- end start))))
         (pos (obuf-fill out))
         (state 0))
    (declare (type index pos) (type (unsigned-byte 8) state))
    (loop for i of-type index from start below end
          do (let ((e (aref table (logior (ash state 8) (aref octets i)))))
               (when (logbitp +huff-fail-bit+ e)
                 (hpack-error "Huffman string contains EOS"))
               (let ((n (ldb (byte 2 8) e)))
                 (when (>= n 1)
                   (setf (aref data pos) (ldb (byte 8 10) e))
                   (incf pos)
                   (when (= n 2)
                     (setf (aref data pos) (ldb (byte 8 18) e))
                     (incf pos))))
               (setf state (ldb (byte 8 0) e))))
    (when (zerop (sbit +huffman-accepting+ state))
      (hpack-error "invalid Huffman padding"))
    (setf (obuf-fill out) pos)
    out))
