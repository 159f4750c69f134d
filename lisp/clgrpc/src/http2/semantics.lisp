;;;; HTTP semantics checks on decoded field blocks (RFC 9113 section 8).
;;;;
;;;; A malformed request or response (8.1.1) is a stream error of type
;;;; PROTOCOL_ERROR; the connection layer calls MALFORMED-FIELD-BLOCK on every
;;;; header block before handing it to the application, so gRPC code can rely
;;;; on well-formed pseudo-headers.  One pass over the list, no consing.

(in-package #:clgrpc.http2)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defun invalid-name-char-p (code)
  "8.2.1: names must not contain controls, space, upper case, DEL or non-ASCII."
  (declare (type fixnum code))
  (or (<= code #x20) (<= #x41 code #x5a) (>= code #x7f)))

(defun invalid-value-p (value)
  "8.2.1: no NUL, CR or LF anywhere, no leading or trailing space or tab."
  (declare (type simple-string value))
  (let ((n (length value)))
    (or (and (plusp n)
             (let ((first (char value 0)) (last (char value (1- n))))
               (or (char= first #\Space) (char= first #\Tab)
                   (char= last #\Space) (char= last #\Tab))))
        (dotimes (i n nil)
          (let ((c (char-code (char value i))))
            (when (or (= c 0) (= c 10) (= c 13))
              (return t)))))))

(defun connection-specific-p (name)
  (declare (type simple-string name))
  (member name '("connection" "proxy-connection" "keep-alive" "transfer-encoding" "upgrade")
          :test #'str=))

(defun malformed-field-block (headers kind)
  "NIL if HEADERS (a list of (name . value)) is a well-formed field block of
KIND (:REQUEST, :RESPONSE or :TRAILERS), else a string saying why not."
  (declare (type list headers))
  (let ((seen-regular nil)
        (method nil) (scheme nil) (path nil) (authority nil) (status nil))
    (dolist (h headers)
      (let ((name (car h)) (value (cdr h)))
        (declare (type simple-string name value))
        (when (zerop (length name))
          (return-from malformed-field-block "empty field name"))
        (when (invalid-value-p value)
          (return-from malformed-field-block (format nil "invalid value for ~A" name)))
        (if (char= (char name 0) #\:)
            (progn
              (when seen-regular
                (return-from malformed-field-block "pseudo-header after regular field"))
              (when (eq kind :trailers)
                (return-from malformed-field-block "pseudo-header in trailers"))
              (macrolet ((once (var)
                           `(if ,var
                                (return-from malformed-field-block
                                  (format nil "duplicate ~A" name))
                                (setf ,var value))))
                (cond ((eq kind :response)
                       (if (str= name ":status")
                           (once status)
                           (return-from malformed-field-block
                             (format nil "pseudo-header ~A in a response" name))))
                      ((str= name ":method") (once method))
                      ((str= name ":scheme") (once scheme))
                      ((str= name ":path") (once path))
                      ((str= name ":authority") (once authority))
                      (t (return-from malformed-field-block
                           (format nil "unknown pseudo-header ~A" name))))))
            (progn
              (setf seen-regular t)
              (dotimes (i (length name))
                (when (invalid-name-char-p (char-code (char name i)))
                  (return-from malformed-field-block (format nil "invalid field name ~S" name))))
              (when (connection-specific-p name)
                (return-from malformed-field-block
                  (format nil "connection-specific field ~A" name)))
              (when (and (str= name "te") (not (str= value "trailers")))
                (return-from malformed-field-block "te other than \"trailers\""))))))
    (case kind
      (:request
       (cond ((null method) "missing :method")
             ((str= method "CONNECT")
              (cond ((or scheme path) "CONNECT with :scheme or :path")
                    ((null authority) "CONNECT without :authority")))
             ((null scheme) "missing :scheme")
             ((null path) "missing :path")
             ((zerop (length (the simple-string path))) "empty :path")))
      (:response
       (cond ((null status) "missing :status")
             ((not (and (= 3 (length (the simple-string status)))
                        (every #'digit-char-p (the simple-string status))))
              "malformed :status"))))))
