;;;; Mutations: each takes an input and returns a new one (never modifies its
;;;; argument: corpus entries are shared).  MUTATE stacks a few of them, as
;;;; AFL's havoc stage does, so one step can both change a length field and
;;;; the payload it covers.

(in-package #:clgrpc.fuzz)

(defvar *random* (make-random-state t)
  "The fuzzer's random state; a run is reproducible from its seed.")

(declaim (inline rnd))
(defun rnd (n)
  "A random integer in [0, N), N > 0."
  (random n *random*))

(defun pick (sequence)
  (elt sequence (rnd (length sequence))))

(defparameter *interesting-integers*
  '(0 1 2 3 4 5 7 8 9 15 16 17 31 32 63 64 100 127 128 255 256 512 1000 1024 4095 4096
    16383 16384 16385 32767 32768 65535 65536 #xffffff #x1000000 #x7fffffff #x80000000
    #xffffffff)
  "Values at the edges of field widths, limits and defaults: where off-by-one
and overflow bugs live.")

(defun insert-octets (input at new)
  (concatenate 'octets (subseq input 0 at) new (subseq input at)))

(defun random-octets (n)
  (let ((o (make-octets n)))
    (dotimes (i n o) (setf (aref o i) (rnd 256)))))

(defun flip-bit (input)
  (if (zerop (length input))
      (random-octets 1)
      (let ((o (copy-seq input)) (i (rnd (length input))))
        (setf (aref o i) (logxor (aref o i) (ash 1 (rnd 8))))
        o)))

(defun set-octet (input)
  (if (zerop (length input))
      (random-octets 1)
      (let ((o (copy-seq input)))
        (setf (aref o (rnd (length o))) (if (zerop (rnd 2)) (rnd 256) (pick '(0 1 #x7f #x80 #xff))))
        o)))

(defun add-to-octet (input)
  "A small arithmetic change: counts and lengths off by a little."
  (if (zerop (length input))
      (random-octets 1)
      (let ((o (copy-seq input)) (i (rnd (length input))))
        (setf (aref o i) (ldb (byte 8 0) (+ (aref o i) (- (rnd 33) 16))))
        o)))

(defun put-interesting (input)
  "An interesting integer, 1, 2 or 4 octets wide, big- or little-endian."
  (let* ((width (pick '(1 2 4)))
         (value (ldb (byte (* 8 width) 0) (pick *interesting-integers*)))
         (big (zerop (rnd 2))))
    (if (< (length input) width)
        (insert-octets input 0 (integer-octets value width big))
        (let ((o (copy-seq input)))
          (replace o (integer-octets value width big) :start1 (rnd (1+ (- (length o) width))))
          o))))

(defun integer-octets (value width big-endian)
  (let ((o (make-octets width)))
    (dotimes (i width o)
      (setf (aref o (if big-endian (- width i 1) i)) (ldb (byte 8 (* 8 i)) value)))))

(defun insert-random (input)
  (insert-octets input (rnd (1+ (length input))) (random-octets (1+ (rnd (pick '(1 4 16 64)))))))

(defun insert-repeated (input)
  "A run of one octet: long fields, padding, repeated continuation octets."
  (let ((o (make-octets (1+ (rnd (pick '(4 32 256)))))))
    (fill o (if (zerop (rnd 2)) (rnd 256) (pick '(0 #x80 #xff))))
    (insert-octets input (rnd (1+ (length input))) o)))

(defun delete-range (input)
  (if (< (length input) 2)
      input
      (let* ((start (rnd (length input)))
             (end (min (length input) (+ start 1 (rnd (pick '(1 4 16 64)))))))
        (concatenate 'octets (subseq input 0 start) (subseq input end)))))

(defun duplicate-range (input)
  (if (zerop (length input))
      input
      (let* ((start (rnd (length input)))
             (end (min (length input) (+ start 1 (rnd 32)))))
        (insert-octets input (rnd (1+ (length input))) (subseq input start end)))))

(defun truncate-input (input)
  (if (zerop (length input)) input (subseq input 0 (rnd (length input)))))

(defun tweak-varint (input)
  "Find a varint (protobuf lengths and tags, HPACK's continuation octets)
at a random position and replace it by its value plus a small delta or an
interesting value, re-encoded: its width may change, as a length's does."
  (if (zerop (length input))
      input
      (let* ((start (rnd (length input)))
             (end (or (position-if (lambda (b) (< b 128)) input :start start)
                      (1- (length input))))
             (end (min (1+ end) (+ start 10)))
             (value (loop for i from start below end
                          sum (ash (logand (aref input i) 127) (* 7 (- i start)))))
             (new (if (zerop (rnd 3))
                      (pick *interesting-integers*)
                      (max 0 (+ value (- (rnd 17) 8))))))
        (concatenate 'octets (subseq input 0 start) (varint-octets new) (subseq input end)))))

(defun varint-octets (value)
  (let ((out '()))
    (loop (if (< value 128)
              (return (coerce (nreverse (cons value out)) 'octets))
              (progn (push (logior 128 (logand value 127)) out)
                     (setf value (ash value -7)))))))

(defun tweak-big-endian-length (input)
  "Add a small delta to a 2-, 3- or 4-octet big-endian field: the HTTP/2
frame length (24 bits), gRPC's message length (32), TLS record lengths (16)."
  (let ((width (pick '(2 3 4))))
    (if (< (length input) width)
        input
        (let* ((o (copy-seq input))
               (at (rnd (1+ (- (length o) width))))
               (value (loop for i below width sum (ash (aref o (+ at i)) (* 8 (- width i 1))))))
          (replace o (integer-octets (ldb (byte (* 8 width) 0) (+ value (- (rnd 33) 16))) width t)
                   :start1 at)
          o))))

(defun splice (input other)
  "The head of INPUT and the tail of OTHER, cut at random points."
  (concatenate 'octets (subseq input 0 (rnd (1+ (length input))))
               (subseq other (rnd (1+ (length other))))))

(defun overwrite-from (input other)
  "A chunk of OTHER over INPUT: carries whole fields from entry to entry."
  (if (or (zerop (length input)) (zerop (length other)))
      input
      (let* ((from (rnd (length other)))
             (n (min (- (length other) from) (1+ (rnd 32))))
             (o (copy-seq input))
             (at (rnd (length o))))
        (replace o other :start1 at :start2 from :end2 (+ from n))
        o)))

(defun insert-token (input tokens)
  (insert-octets input (rnd (1+ (length input))) (pick tokens)))

(defun mutate-once (input corpus tokens)
  (case (rnd (if tokens 15 14))
    ((0 1) (flip-bit input))
    (2 (set-octet input))
    (3 (add-to-octet input))
    (4 (put-interesting input))
    (5 (insert-random input))
    (6 (insert-repeated input))
    (7 (delete-range input))
    (8 (duplicate-range input))
    (9 (truncate-input input))
    (10 (tweak-varint input))
    (11 (tweak-big-endian-length input))
    (12 (splice input (pick corpus)))
    (13 (overwrite-from input (pick corpus)))
    (14 (insert-token input tokens))))

(defun mutate (input corpus max-length &optional tokens)
  "INPUT changed by 1 to 8 stacked mutations (mostly few), at most
MAX-LENGTH octets.  CORPUS (a vector of inputs) feeds splices; TOKENS,
octet vectors a target knows to be meaningful, are inserted whole."
  (let ((out input))
    (dotimes (i (ash 1 (rnd 4)))
      (setf out (mutate-once out corpus tokens)))
    (if (> (length out) max-length)
        (subseq out 0 max-length)
        out)))
