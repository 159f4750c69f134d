;;;; Corpus files: one input per file, in a directory per target.  Seeds have
;;;; names that say what they are; inputs the fuzzer keeps or finds are named
;;;; by a hash of their content, so saving one twice writes one file.

(in-package #:clgrpc.fuzz)

(defun read-octets (path)
  (with-open-file (in path :element-type '(unsigned-byte 8))
    (let ((o (make-octets (file-length in))))
      (read-sequence o in)
      o)))

(defun write-octets (path octets)
  (ensure-directories-exist path)
  (with-open-file (out path :element-type '(unsigned-byte 8)
                            :direction :output :if-exists :supersede)
    (write-sequence octets out))
  path)

(defun content-name (octets)
  "A 64-bit FNV-1a hash of OCTETS, in hex."
  (let ((h #xcbf29ce484222325))
    (loop for b across octets
          do (setf h (ldb (byte 64 0) (* (logxor h b) #x100000001b3))))
    (format nil "~16,'0x" h)))

(defun target-directory (root target)
  "ROOT/<target name>/, or NIL without ROOT."
  (and root (merge-pathnames (concatenate 'string (target-name target) "/")
                             (as-directory root))))

(defun read-corpus (directory)
  "Every input in DIRECTORY, as (name . octets), sorted by name; () if the
directory does not exist."
  (and directory
       (sort (loop for path in (directory (merge-pathnames "*.*" directory))
                   when (pathname-name path)
                     collect (cons (file-namestring path) (read-octets path)))
             #'string< :key #'car)))

(defun save-input (directory octets)
  "Write OCTETS into DIRECTORY under its content name; returns the path."
  (write-octets (merge-pathnames (content-name octets) directory) octets))
