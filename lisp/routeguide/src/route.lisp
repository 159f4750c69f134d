;;;; The client's fixed inputs, identical to go/routeguide/rgclient's so
;;;; that the Lisp and the Go client send the same calls and print the same
;;;; report: the demo point, area and notes, and the RecordRoute route,
;;;; which Go draws from the feature database with math/rand/v2's PCG
;;;; (seeded) and Rand.IntN.  Both are reproduced here bit for bit.

(in-package #:routeguide.client)

(defconstant +route-seed+ 1
  "The Go client's seed: -points N sends the same N points from either client.")

(defun known-point () (make-point :latitude 409146138 :longitude -746188906))
(defun missing-point () (make-point :latitude 0 :longitude 0))

(defun demo-area ()
  (make-rectangle :lo (make-point :latitude 400000000 :longitude -750000000)
                  :hi (make-point :latitude 420000000 :longitude -730000000)))

(defun demo-notes ()
  (loop for (longitude message) in '((1 "First message") (2 "Second message") (3 "Third message")
                                     (1 "Fourth message") (2 "Fifth message") (3 "Sixth message"))
        collect (make-route-note :location (make-point :latitude 0 :longitude longitude)
                                 :message message)))

;;; math/rand/v2's PCG: a 128-bit LCG with the DXSM output function.  The
;;; state is kept as two 64-bit halves, as Go does.

(deftype u64 () '(unsigned-byte 64))

(defstruct (pcg (:constructor make-pcg (hi lo)))
  (hi 0 :type u64)
  (lo 0 :type u64))

(defun pcg-next-u64 (pcg)
  "The next value of Go's PCG.Uint64."
  (let* ((mul (logior (ash 2549297995355413924 64) 4865540595714422341))
         (inc (logior (ash 6364136223846793005 64) 1442695040888963407))
         (state (ldb (byte 128 0) (+ (* (logior (ash (pcg-hi pcg) 64) (pcg-lo pcg)) mul) inc)))
         (hi (ldb (byte 64 64) state))
         (lo (ldb (byte 64 0) state)))
    (setf (pcg-hi pcg) hi (pcg-lo pcg) lo)
    (setf hi (logxor hi (ash hi -32)))
    (setf hi (ldb (byte 64 0) (* hi #xda942042e4dd58b5)))
    (setf hi (logxor hi (ash hi -48)))
    (ldb (byte 64 0) (* hi (logior lo 1)))))

(defun pcg-int-n (pcg n)
  "Go's Rand.IntN(n) over PCG (its uint64n: Lemire's multiply-shift with
the same rejection, so the sequence matches)."
  (if (zerop (logand n (1- n)))
      (logand (pcg-next-u64 pcg) (1- n))
      (let* ((product (* (pcg-next-u64 pcg) n)))
        (when (< (ldb (byte 64 0) product) n)
          (let ((threshold (mod (- (expt 2 64) n) n)))
            (loop while (< (ldb (byte 64 0) product) threshold)
                  do (setf product (* (pcg-next-u64 pcg) n)))))
        (ash product -64))))

(defun route (n &optional (seed +route-seed+) (db (default-features)))
  "N points picked from DB's features (in file order) as rgclient.Route
picks them: the same arguments give the same points as the Go client."
  (let ((features (feature-db-features db))
        (rng (make-pcg seed seed)))
    (loop repeat n
          collect (let ((location (feature-location (svref features (pcg-int-n rng (length features))))))
                    (make-point :latitude (point-latitude location)
                                :longitude (point-longitude location))))))
