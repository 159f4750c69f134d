;;;; Writing a target's seed corpus, from its encoders, as checked-in files:
;;;; `clgrpc-fuzz --write-seeds` after a change to what the seeds cover.

(in-package #:clgrpc.fuzz)

(defun write-seeds (target root)
  "Replace ROOT/<target>/'s files with TARGET's seeds; returns their count."
  (let ((dir (target-directory root target)))
    (dolist (old (directory (merge-pathnames "*.*" dir)))
      (delete-file old))
    (loop for (name . octets) in (funcall (target-seeds target))
          do (write-octets (merge-pathnames name dir) octets)
          count t)))
