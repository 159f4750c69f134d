;;;; HPACK static table, RFC 7541 Appendix A, and the lookups the encoder
;;;; needs.  Index 1 is the first entry; the dynamic table starts at 62.
;;;;
;;;; The entry strings are shared with decoded header lists (a decoded
;;;; indexed field returns these very strings), which saves an allocation
;;;; per indexed header; callers must treat decoded strings as read-only.

(in-package #:clgrpc.hpack)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +static-table-length+ 61)

(declaim (type simple-vector +static-table+))
(sb-ext:defglobal +static-table+
    (map 'simple-vector
         (lambda (e) (cons (coerce (car e) '(simple-array character (*)))
                           (coerce (cdr e) '(simple-array character (*)))))
         '((":authority" . "")
           (":method" . "GET")
           (":method" . "POST")
           (":path" . "/")
           (":path" . "/index.html")
           (":scheme" . "http")
           (":scheme" . "https")
           (":status" . "200")
           (":status" . "204")
           (":status" . "206")
           (":status" . "304")
           (":status" . "400")
           (":status" . "404")
           (":status" . "500")
           ("accept-charset" . "")
           ("accept-encoding" . "gzip, deflate")
           ("accept-language" . "")
           ("accept-ranges" . "")
           ("accept" . "")
           ("access-control-allow-origin" . "")
           ("age" . "")
           ("allow" . "")
           ("authorization" . "")
           ("cache-control" . "")
           ("content-disposition" . "")
           ("content-encoding" . "")
           ("content-language" . "")
           ("content-length" . "")
           ("content-location" . "")
           ("content-range" . "")
           ("content-type" . "")
           ("cookie" . "")
           ("date" . "")
           ("etag" . "")
           ("expect" . "")
           ("expires" . "")
           ("from" . "")
           ("host" . "")
           ("if-match" . "")
           ("if-modified-since" . "")
           ("if-none-match" . "")
           ("if-range" . "")
           ("if-unmodified-since" . "")
           ("last-modified" . "")
           ("link" . "")
           ("location" . "")
           ("max-forwards" . "")
           ("proxy-authenticate" . "")
           ("proxy-authorization" . "")
           ("range" . "")
           ("referer" . "")
           ("refresh" . "")
           ("retry-after" . "")
           ("server" . "")
           ("set-cookie" . "")
           ("strict-transport-security" . "")
           ("transfer-encoding" . "")
           ("user-agent" . "")
           ("vary" . "")
           ("via" . "")
           ("www-authenticate" . ""))))

(declaim (inline static-table-entry))
(defun static-table-entry (index)
  "The (name . value) at 1-based static INDEX."
  (declare (type (integer 1 61) index))
  (svref +static-table+ (1- index)))

;;; name -> (first-index . ((value . index) ...)).  The first index is what
;;; the encoder uses for "indexed name" (the RFC examples do the same).
(declaim (type hash-table +static-index+))
(sb-ext:defglobal +static-index+
    (let ((h (make-hash-table :test 'equal)))
      (loop for i from +static-table-length+ downto 1
            for (name . value) = (static-table-entry i)
            do (let ((cell (gethash name h)))
                 (if cell
                     (setf (car cell) i)
                     (setf cell (setf (gethash name h) (cons i nil))))
                 (push (cons value i) (cdr cell))))
      h))

(defun static-table-find (name value)
  "Returns (values full-match-index name-match-index), each NIL if absent."
  (declare (type string name value))
  (let ((cell (gethash name +static-index+)))
    (if cell
        (values (loop for (v . i) in (cdr cell) when (str= v value) return i) (car cell))
        (values nil nil))))
