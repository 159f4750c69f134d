;;;; The feature database, as in go/routeguide/features: named places at E7
;;;; points, in file order, with lookup by exact point.  The standard
;;;; 100-feature database, go/routeguide/features/route_guide_db.json (the
;;;; Go server's own file, not a copy), is embedded at compile time so the
;;;; programs need no file at run time; -db loads another in the same JSON
;;;; format.

(in-package #:routeguide)

(defconstant +max-latitude+ 900000000)
(defconstant +max-longitude+ 1800000000)

(defstruct (feature-db (:constructor %make-feature-db))
  (features #() :type simple-vector)    ; FEATURE messages in file order
  (by-point (make-hash-table :test 'eql) :type hash-table))

(declaim (inline point-key))
(defun point-key (latitude longitude)
  "One fixnum per valid point: |latitude| <= 9e8 and |longitude| < 2e9."
  (+ (* latitude 4000000000) longitude))

(defun valid-point-p (latitude longitude)
  (and (<= (- +max-latitude+) latitude +max-latitude+)
       (<= (- +max-longitude+) longitude +max-longitude+)))

(defun json-get (object key)
  (cdr (assoc key object :test #'string=)))

(defun make-feature-db (json-text)
  "The database of JSON-TEXT: {\"feature\": [...]} or a bare array of
{\"location\": {\"latitude\": N, \"longitude\": N}, \"name\": S}.  Rejects
missing or out-of-range locations and duplicate points, like the Go loader."
  (let* ((json (parse-json json-text))
         (list (if (and (consp json) (consp (car json)) (stringp (caar json)))
                   (json-get json "feature")
                   json))
         (db (%make-feature-db))
         (features '()))
    (when (null list)
      (error "feature database is empty"))
    (loop for entry in list
          for i from 0
          do (let* ((location (json-get entry "location"))
                    (latitude (or (json-get location "latitude") 0))
                    (longitude (or (json-get location "longitude") 0))
                    (name (or (json-get entry "name") "")))
               (unless location
                 (error "feature ~D (~S): missing location" i name))
               (unless (valid-point-p latitude longitude)
                 (error "feature ~D (~S): location out of range" i name))
               (let ((key (point-key latitude longitude)))
                 (when (gethash key (feature-db-by-point db))
                   (error "feature ~D (~S): duplicate location" i name))
                 (let ((f (make-feature :name name
                                        :location (make-point :latitude latitude
                                                              :longitude longitude))))
                   (setf (gethash key (feature-db-by-point db)) f)
                   (push f features)))))
    (setf (feature-db-features db) (coerce (nreverse features) 'simple-vector))
    db))

(defun load-features (pathname)
  (with-open-file (in pathname :external-format :utf-8)
    (let ((text (make-string (file-length in))))
      (make-feature-db (subseq text 0 (read-sequence text in))))))

(eval-when (:compile-toplevel :load-toplevel :execute)
  (defun read-text-file (relative)
    (let ((path (merge-pathnames relative (or *compile-file-pathname* *load-pathname*))))
      (with-open-file (in path :external-format :utf-8)
        (let ((text (make-string (file-length in))))
          (subseq text 0 (read-sequence text in)))))))

(defparameter *default-features-json*
  ;; The path is the same in the source tree (ASDF) and in Bazel's
  ;; execroot, where the file is a compile_data input of this library.
  #.(read-text-file "../../../go/routeguide/features/route_guide_db.json")
  "The standard database, read when this file was compiled.")

(defvar *default-features* nil)

(defun default-features ()
  (or *default-features*
      (setf *default-features* (make-feature-db *default-features-json*))))

(defun lookup-feature (db latitude longitude)
  (gethash (point-key latitude longitude) (feature-db-by-point db)))
