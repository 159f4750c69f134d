;;;; HPACK encoder, RFC 7541 sections 4.2, 5 and 6.
;;;;
;;;; Strategy (same as the RFC Appendix C examples, so they are reproduced
;;;; byte for byte): an exact match in the static or dynamic table is sent as
;;;; an indexed field; otherwise a literal whose name is indexed when the
;;;; name is known (static table preferred, it never gets evicted), added to
;;;; the dynamic table unless the caller asks for :WITHOUT or :NEVER
;;;; indexing.  Huffman coding is used when it is shorter (:AUTO), always
;;;; (T) or never (NIL).
;;;;
;;;; When the peer changes SETTINGS_HEADER_TABLE_SIZE the encoder resizes at
;;;; once and remembers to open the next block with size update(s): the
;;;; smallest size reached and then the final one, as 4.2 requires.

(in-package #:clgrpc.hpack)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defstruct (encoder (:constructor %make-encoder))
  (table (make-dynamic-table :indexed t) :type dynamic-table)
  (huffman :auto :type (member :auto t nil))
  ;; Upper bound we impose on ourselves regardless of what the peer allows:
  ;; a bigger table costs memory and lookup time for little gain.
  (preferred-max-size 4096 :type index)
  ;; Pending size update: smallest size since the last block, or NIL.
  (pending-min nil :type (or null index)))

(defun make-encoder (&key (max-table-size 4096) (huffman :auto)
                          (announce-size (/= max-table-size 4096)))
  "MAX-TABLE-SIZE is the most we will use.  The peer's decoder starts at the
protocol default of 4096, so a different size is announced in the first
block unless ANNOUNCE-SIZE is false (both sides already agree)."
  (let ((table (make-dynamic-table :max-size max-table-size :indexed t)))
    ;; Seed the name index with the static table's matches (see
    ;; dynamic-table.lisp): CAR = (first-static-index . ((value . index) ...)).
    (maphash (lambda (name static-cell)
               (setf (gethash name (dynamic-table-index table)) (cons static-cell nil)))
             +static-index+)
    (%make-encoder :table table
                   :huffman huffman
                   :preferred-max-size max-table-size
                   :pending-min (and announce-size max-table-size))))

(defun encoder-set-max-table-size (encoder peer-limit)
  "Apply the peer's SETTINGS_HEADER_TABLE_SIZE.  The table shrinks to
min(peer-limit, preferred) immediately; the next header block announces it."
  (declare (type encoder encoder) (type index peer-limit))
  (let* ((table (encoder-table encoder))
         (new (min peer-limit (encoder-preferred-max-size encoder))))
    (unless (= new (dynamic-table-max-size table))
      (setf (encoder-pending-min encoder)
            (min new (or (encoder-pending-min encoder) (dynamic-table-max-size table))))
      (dynamic-table-resize table new))
    encoder))

(defun encode-string (buf string huffman)
  "Append STRING as an HPACK string literal (5.2).  HUFFMAN: :AUTO, T or NIL."
  (declare (type obuf buf) (type string string))
  (let ((raw-length (length string)))
    (if (null huffman)
        (progn (encode-integer buf raw-length 7 0)
               (obuf-write-latin1 buf string))
        (let ((huff-length (huffman-encoded-length string)))
          (if (or (eq huffman t) (< huff-length raw-length))
              (progn (encode-integer buf huff-length 7 #x80)
                     (huffman-encode buf string))
              (progn (encode-integer buf raw-length 7 0)
                     (obuf-write-latin1 buf string))))))
  buf)

(defun emit-pending-size-update (encoder buf)
  (let ((min (encoder-pending-min encoder)))
    (when min
      (let ((final (dynamic-table-max-size (encoder-table encoder))))
        (when (< min final)
          (encode-integer buf min 5 #x20))
        (encode-integer buf final 5 #x20))
      (setf (encoder-pending-min encoder) nil))))

(defun encode-header (encoder buf name value &key (indexing :incremental))
  "Append one header field.  INDEXING is :INCREMENTAL (6.2.1), :WITHOUT
(6.2.2) or :NEVER (6.2.3, for sensitive values: never matched against or
added to the tables).  NAME should be lower case (RFC 9113 8.2.1)."
  (declare (type encoder encoder) (type obuf buf) (type string name value))
  (let ((table (encoder-table encoder))
        (huffman (encoder-huffman encoder)))
    (let* ((cell (gethash name (dynamic-table-index table)))
           (static (car cell))
           (static-name (car static))
           (static-full (loop for (v . i) in (cdr static) when (str= v value) return i)))
      (multiple-value-bind (dyn-full dyn-name)
          (if static-full
              (values nil nil)
              (dynamic-index-match table cell value))
        (cond
          ((and static-full (not (eq indexing :never)))
           (encode-integer buf static-full 7 #x80))
          ((and dyn-full (not (eq indexing :never)))
           (encode-integer buf (+ dyn-full +static-table-length+) 7 #x80))
          (t
           (let ((name-index (cond (static-name)
                                   (dyn-name (+ dyn-name +static-table-length+))
                                   (t 0)))
                 (indexing (if (and (eq indexing :incremental)
                                    (> (header-entry-size name value)
                                       (dynamic-table-max-size table)))
                               ;; Would only flush the table: don't index.
                               :without
                               indexing)))
             (ecase indexing
               (:incremental (encode-integer buf name-index 6 #x40))
               (:without (encode-integer buf name-index 4 #x00))
               (:never (encode-integer buf name-index 4 #x10)))
             (when (zerop name-index)
               (encode-string buf name huffman))
             (encode-string buf value huffman)
             (when (eq indexing :incremental)
               (dynamic-table-add table name value))))))))
  buf)

(defun check-header-list (headers)
  "Signal HPACK-ERROR unless every name and value of HEADERS is a string of
octets (characters below 256)."
  (flet ((octet-string-p (s)
           (and (stringp s) (every (lambda (c) (< (char-code c) 256)) s))))
    (dolist (h headers)
      (let ((name (car h))
            (value (if (consp (cdr h)) (second h) (cdr h))))
        (unless (and (octet-string-p name) (octet-string-p value))
          (hpack-error "header field ~S is not a pair of octet strings" h))))))

(defun encode-header-block (encoder buf headers)
  "Append a complete header block for HEADERS, a list whose elements are
(name . value) or (name value indexing).  Emits any pending table size
update first."
  (declare (type encoder encoder) (type obuf buf) (type list headers))
  ;; Everything that could fail is checked before anything is written or
  ;; the dynamic table changes: a half-encoded block would desynchronize
  ;; the peer's decoder from our table.
  (check-header-list headers)
  (emit-pending-size-update encoder buf)
  (dolist (h headers buf)
    (if (consp (cdr h))
        (encode-header encoder buf (first h) (second h)
                       :indexing (or (third h) :incremental))
        (encode-header encoder buf (car h) (cdr h)))))
