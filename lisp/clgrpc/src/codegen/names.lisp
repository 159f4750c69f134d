;;;; Lisp names for protobuf names, and the symbols of generated code.
;;;;
;;;;   message routeguide.RouteNote   -> struct ROUTE-NOTE, MAKE-ROUTE-NOTE,
;;;;                                     ENCODE-ROUTE-NOTE, DECODE-ROUTE-NOTE
;;;;   field point_count              -> accessor ROUTE-SUMMARY-POINT-COUNT
;;;;   nested Outer.Inner             -> OUTER.INNER (the dot keeps it apart
;;;;                                     from a top-level OuterInner)
;;;;   enum value COLOR_RED           -> :COLOR-RED
;;;;   service RouteGuide, GetFeature -> ROUTE-GUIDE-GET-FEATURE (client stub)
;;;;
;;;; Names are relative to the proto package; all symbols are interned in the
;;;; Lisp package the definitions are generated for.

(in-package #:clgrpc.codegen)

(defun lisp-name (string)
  "CamelCase and snake_case to upper-case words joined by hyphens:
RouteNote -> ROUTE-NOTE, point_count -> POINT-COUNT, HTTPServer -> HTTP-SERVER."
  (let ((out (make-string-output-stream))
        (n (length string)))
    (dotimes (i n)
      (let ((c (char string i))
            (prev (and (> i 0) (char string (1- i))))
            (next (and (< (1+ i) n) (char string (1+ i)))))
        (cond ((char= c #\_) (write-char #\- out))
              ((and (upper-case-p c) prev (char/= prev #\_)
                    (or (lower-case-p prev) (digit-char-p prev)
                        (and (upper-case-p prev) next (lower-case-p next))))
               (write-char #\- out)
               (write-char c out))
              (t (write-char (char-upcase c) out)))))
    (get-output-stream-string out)))

(defun split-dots (string)
  (loop for start = 0 then (1+ dot)
        for dot = (position #\. string :start start)
        collect (subseq string start dot)
        while dot))

(defun relative-name (full-name package)
  "FULL-NAME without the leading PACKAGE."
  (let ((n (length package)))
    (if (and (plusp n) (> (length full-name) n)
             (string= package full-name :end2 n)
             (char= (char full-name n) #\.))
        (subseq full-name (1+ n))
        full-name)))

(defun type-base-name (full-name package)
  "OUTER.INNER for pkg.Outer.Inner."
  (format nil "~{~A~^.~}" (mapcar #'lisp-name (split-dots (relative-name full-name package)))))

(defun strip-dot (name)
  (if (and (plusp (length name)) (char= (char name 0) #\.)) (subseq name 1) name))
