;;;; HPACK dynamic table, RFC 7541 sections 2.3.2, 4.1-4.4.
;;;;
;;;; A FIFO of (name . value) conses kept in a ring buffer: insertion and
;;;; eviction are O(1) and never shift elements.  Index 1 is the newest
;;;; entry.  Size is accounted as RFC 7541 4.1 says: name octets + value
;;;; octets + 32.  Strings are Latin-1 (one char per octet), so LENGTH is the
;;;; octet count.
;;;;
;;;; The encoder also needs "is this field already in the table?"; for that
;;;; the table optionally keeps a hash index name -> cell, where the cell's
;;;; CDR is ((value . seq) ...) for the live entries of that name (SEQ is
;;;; the entry's insertion number) and its CAR belongs to the owner: the
;;;; encoder stores the static-table matches there, so one hash lookup per
;;;; header answers both tables (hashing the name dominated encoding time).
;;;; Decoders never look up by content, so their tables skip the index.

(in-package #:clgrpc.hpack)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +entry-overhead+ 32
  "Per-entry overhead counted in the table size (RFC 7541 section 4.1).")

(defstruct (dynamic-table (:constructor %make-dynamic-table))
  (ring (make-array 16 :initial-element nil) :type simple-vector)
  (head 0 :type index)                  ; slot of the newest entry
  (length 0 :type index)                ; number of entries
  (size 0 :type index)                  ; RFC 7541 size in octets
  (max-size 4096 :type index)
  (inserted 0 :type (unsigned-byte 62)) ; total insertions, gives each entry a seq
  (index nil :type (or null hash-table)))

(defun make-dynamic-table (&key (max-size 4096) (indexed nil))
  "A table holding at most MAX-SIZE octets.  INDEXED adds the content index
the encoder uses for lookups."
  (%make-dynamic-table :max-size max-size
                       ;; Sized for the static table's names the encoder seeds it
                       ;; with, and a few more, so that seeding does not regrow it.
                       :index (and indexed (make-hash-table :test 'equal :size 96))))

(declaim (inline header-entry-size))
(defun header-entry-size (name value)
  (declare (type string name value))
  (+ (length name) (length value) +entry-overhead+))

(declaim (inline ring-slot))
(defun ring-slot (table i)
  "Ring slot of the 0-based age I (0 = newest)."
  (declare (type dynamic-table table) (type index i))
  (let ((cap (length (dynamic-table-ring table))))
    (mod (+ (- (dynamic-table-head table) i) cap) cap)))

(defun dynamic-table-entry (table index)
  "The (name . value) at 1-based dynamic INDEX, or NIL if out of range."
  (declare (type dynamic-table table) (type index index))
  (when (<= 1 index (dynamic-table-length table))
    (svref (dynamic-table-ring table) (ring-slot table (1- index)))))

(defun dynamic-table-entries (table)
  "All entries, newest first (for tests and debugging)."
  (loop for i from 1 to (dynamic-table-length table)
        collect (dynamic-table-entry table i)))

(defun unindex-entry (table entry seq)
  (let* ((h (dynamic-table-index table))
         (name (car entry))
         (cell (gethash name h)))
    (setf (cdr cell) (delete seq (the list (cdr cell)) :key #'cdr :test #'=))
    ;; Keep cells the owner annotated (CAR), drop the rest.
    (when (and (null (cdr cell)) (null (car cell)))
      (remhash name h))))

(defun evict-oldest (table)
  (declare (type dynamic-table table))
  (let* ((n (dynamic-table-length table))
         (slot (ring-slot table (1- n)))
         (entry (svref (dynamic-table-ring table) slot)))
    (setf (svref (dynamic-table-ring table) slot) nil)
    (decf (dynamic-table-size table) (header-entry-size (car entry) (cdr entry)))
    (when (dynamic-table-index table)
      (unindex-entry table entry (- (dynamic-table-inserted table) n)))
    (setf (dynamic-table-length table) (1- n))))

(defun evict-to (table limit)
  "Evict oldest entries until the size is at most LIMIT."
  (declare (type dynamic-table table) (type index limit))
  (loop while (> (dynamic-table-size table) limit)
        do (evict-oldest table)))

(defun grow-ring (table)
  (let* ((old (dynamic-table-ring table))
         (n (dynamic-table-length table))
         (new (make-array (* 2 (length old)) :initial-element nil)))
    ;; Re-lay oldest..newest at slots 0..n-1, so head = n-1.
    (dotimes (i n)
      (setf (svref new (- n 1 i)) (svref old (ring-slot table i))))
    (setf (dynamic-table-ring table) new
          (dynamic-table-head table) (max 0 (1- n)))))

(defun dynamic-table-add (table name value)
  "Insert (NAME . VALUE) as the newest entry, evicting as needed (4.4).
An entry larger than the whole table empties it and is not added."
  (declare (type dynamic-table table) (type string name value))
  (let ((esize (header-entry-size name value))
        (max (dynamic-table-max-size table)))
    (cond ((> esize max)
           (evict-to table 0))
          (t
           (evict-to table (- max esize))
           (when (= (dynamic-table-length table) (length (dynamic-table-ring table)))
             (grow-ring table))
           (let* ((entries (dynamic-table-ring table))
                  (head (if (zerop (dynamic-table-length table))
                            (dynamic-table-head table)
                            (mod (1+ (dynamic-table-head table)) (length entries))))
                  (entry (cons name value)))
             (setf (svref entries head) entry
                   (dynamic-table-head table) head)
             (incf (dynamic-table-length table))
             (incf (dynamic-table-size table) esize)
             (let ((h (dynamic-table-index table)))
               (when h
                 (let ((cell (or (gethash name h) (setf (gethash name h) (cons nil nil)))))
                   (push (cons value (dynamic-table-inserted table)) (cdr cell)))))
             (incf (dynamic-table-inserted table)))))
    table))

(defun dynamic-table-resize (table max-size)
  "Set the maximum size, evicting to fit (4.3)."
  (declare (type dynamic-table table) (type index max-size))
  (setf (dynamic-table-max-size table) max-size)
  (evict-to table max-size)
  table)

(declaim (inline dynamic-index-match))
(defun dynamic-index-match (table cell value)
  "Given the index CELL for a name (or NIL), return (values full-match-index
name-match-index): 1-based dynamic indices of the newest matching entries,
each NIL if absent."
  (declare (type dynamic-table table) (type list cell) (type string value))
  (let ((candidates (cdr cell)))
    (if (null candidates)
        (values nil nil)
        (let ((inserted (dynamic-table-inserted table))
              (full (loop for c in candidates when (str= (car c) value) return c)))
          (declare (type (unsigned-byte 62) inserted))
          (values (and full (- inserted (the (unsigned-byte 62) (cdr full))))
                  (- inserted (the (unsigned-byte 62) (cdr (first candidates)))))))))

(defun dynamic-table-find (table name value)
  "For an indexed table: (values full-match-index name-match-index) as in
DYNAMIC-INDEX-MATCH."
  (declare (type dynamic-table table) (type string name value))
  (dynamic-index-match table (gethash name (dynamic-table-index table)) value))
