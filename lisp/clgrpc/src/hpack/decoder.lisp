;;;; HPACK decoder, RFC 7541 sections 3, 4.2, 5.2 and 6.
;;;;
;;;; DECODE-HEADER-BLOCK turns one complete header block (HEADERS plus any
;;;; CONTINUATION fragments, already concatenated by the HTTP/2 layer) into a
;;;; list of (name . value) strings.  Every malformation signals HPACK-ERROR:
;;;; indices are range checked, string lengths checked against the block,
;;;; integers bounded, Huffman padding verified.
;;;;
;;;; Table size updates (6.3) are only legal at the start of a block and must
;;;; not exceed the limit we advertised in SETTINGS_HEADER_TABLE_SIZE; when we
;;;; lower that limit below the current size, the peer's next block must
;;;; start with an update (4.2), which we enforce.

(in-package #:clgrpc.hpack)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defstruct (decoder (:constructor %make-decoder))
  (table (make-dynamic-table) :type dynamic-table)
  ;; Our SETTINGS_HEADER_TABLE_SIZE: the largest size an update may set.
  (max-table-size-limit 4096 :type index)
  ;; Set when the limit dropped below the table's max: next block must
  ;; begin with a size update.
  (update-required nil :type boolean)
  ;; Scratch for Huffman decoding, reused across strings.
  (scratch (make-obuf 256) :type obuf)
  ;; Past this header list size (6.5.2) a block's fields are still decoded,
  ;; to keep the table in step, but no longer collected: the caller refuses
  ;; the block, and an oversized list never exists in memory.  NIL: no limit.
  (max-list-size nil :type (or null index)))

(defun make-decoder (&key (max-table-size 4096) max-list-size)
  "A decoder whose table starts at, and is limited to, MAX-TABLE-SIZE octets.
Past MAX-LIST-SIZE a block's fields are no longer collected (see
DECODE-HEADER-BLOCK)."
  (%make-decoder :max-list-size max-list-size
                 :table (make-dynamic-table :max-size max-table-size)
                 :max-table-size-limit max-table-size))

(defun decoder-set-max-table-size-limit (decoder limit)
  "Call when our SETTINGS_HEADER_TABLE_SIZE changes (and is acknowledged)."
  (declare (type decoder decoder) (type index limit))
  (setf (decoder-max-table-size-limit decoder) limit)
  (when (< limit (dynamic-table-max-size (decoder-table decoder)))
    (setf (decoder-update-required decoder) t))
  decoder)

(defun decode-string (octets pos end scratch)
  "Decode a string literal (5.2) at POS.  Returns (values string next-pos).
The string is Latin-1 (one character per octet)."
  (declare (type octets octets) (type index pos end) (type obuf scratch))
  (when (>= pos end)
    (hpack-error "truncated string literal"))
  (let ((huffman (logbitp 7 (aref octets pos))))
    (multiple-value-bind (len start) (decode-integer octets pos end 7)
      (let ((stop (+ start len)))
        (when (> stop end)
          (hpack-error "string literal length ~D exceeds block" len))
        (if huffman
            (progn
              (obuf-reset scratch)
              (huffman-decode octets start stop scratch)
              (values (octets-to-latin1 (obuf-data scratch) 0 (obuf-fill scratch))
                      stop))
            (values (octets-to-latin1 octets start stop) stop))))))

(declaim (inline lookup-index))
(defun lookup-index (decoder index)
  "The (name . value) for a 1-based combined index (2.3.3)."
  (declare (type decoder decoder) (type hpack-int index))
  (cond ((zerop index)
         (hpack-error "index 0"))
        ((<= index +static-table-length+)
         (static-table-entry index))
        (t
         (or (dynamic-table-entry (decoder-table decoder)
                                  (- index +static-table-length+))
             (hpack-error "index ~D beyond dynamic table of ~D entries" index
                          (dynamic-table-length (decoder-table decoder)))))))

(defun decode-header-block (decoder octets &optional (start 0) (end (length octets)))
  "Decode the header block OCTETS[START,END).  Returns (values headers
header-list-size): HEADERS is a fresh list of (name . value) in order; the
size is the RFC 9113 6.5.2 SETTINGS_MAX_HEADER_LIST_SIZE measure, so the
caller can enforce its limit after the table state is kept in sync.  Once
the size passes the decoder's MAX-LIST-SIZE, later fields are decoded but
left out of HEADERS."
  (declare (type decoder decoder) (type octets octets) (type index start end))
  (let* ((table (decoder-table decoder))
         (scratch (decoder-scratch decoder))
         (pos start)
         (head (list nil))
         (tail head)
         (list-size 0)
         (limit (or (decoder-max-list-size decoder) (1- array-dimension-limit)))
         (seen-field nil))
    (declare (type index pos list-size limit))
    (flet ((emit (name value)
             (declare (type simple-string name value))
             (incf list-size (+ (length name) (length value) +entry-overhead+))
             (when (<= list-size limit)
               (let ((cell (list (cons name value))))
                 (setf (cdr tail) cell tail cell)))
             (setf seen-field t))
           (literal (prefix-bits)
             ;; Literal field: name by index, or a new name string; then value.
             (multiple-value-bind (name-index p) (decode-integer octets pos end prefix-bits)
               (let ((name (if (zerop name-index)
                               (multiple-value-bind (s p2) (decode-string octets p end scratch)
                                 (setf p p2)
                                 s)
                               (car (lookup-index decoder name-index)))))
                 (multiple-value-bind (value p3) (decode-string octets p end scratch)
                   (setf pos p3)
                   (values name value))))))
      (when (and (decoder-update-required decoder)
                 (or (>= pos end) (/= (logand (aref octets pos) #xe0) #x20)))
        (hpack-error "expected dynamic table size update after limit decrease"))
      (loop while (< pos end)
            do (let ((b (aref octets pos)))
                 (cond
                   ((logbitp 7 b)       ; 6.1 indexed field
                    (multiple-value-bind (index p) (decode-integer octets pos end 7)
                      (setf pos p)
                      (let ((entry (lookup-index decoder index)))
                        (emit (car entry) (cdr entry)))))
                   ((logbitp 6 b)       ; 6.2.1 literal with incremental indexing
                    (multiple-value-bind (name value) (literal 6)
                      (dynamic-table-add table name value)
                      (emit name value)))
                   ((logbitp 5 b)       ; 6.3 dynamic table size update
                    (when seen-field
                      (hpack-error "table size update after a header field"))
                    (multiple-value-bind (size p) (decode-integer octets pos end 5)
                      (when (> size (decoder-max-table-size-limit decoder))
                        (hpack-error "table size update ~D exceeds limit ~D" size
                                     (decoder-max-table-size-limit decoder)))
                      (setf pos p)
                      (setf (decoder-update-required decoder) nil)
                      (dynamic-table-resize table size)))
                   (t                   ; 6.2.2 without / 6.2.3 never indexed
                    (multiple-value-bind (name value) (literal 4)
                      (emit name value)))))))
    (values (cdr head) list-size)))
