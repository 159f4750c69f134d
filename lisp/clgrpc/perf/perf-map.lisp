;;;; A map of this Lisp image's compiled functions for Linux perf, so that
;;;; `perf record` and `perf report` name Lisp frames instead of printing
;;;; bare addresses.  perf reads /tmp/perf-PID.map for code in anonymous
;;;; memory, which is where SBCL keeps it.  Unlike sb-sprof, perf samples
;;;; every thread from outside, with no signal handler in the process and no
;;;; per-thread sample buffer (a megabyte each in sb-sprof, a gigabyte for a
;;;; server holding a thousand blocked handlers), and shows the kernel's
;;;; share beside Lisp's.
;;;;
;;;; Load it into an image that loaded clgrpc from source, after loading
;;;; everything that will run, and call WRITE-PERF-MAP:
;;;;
;;;;   sbcl --load dev-registry.lisp --eval '(asdf:load-system "handlercost/server")' \
;;;;        --load lisp/clgrpc/perf/perf-map.lisp --eval '(write-perf-map)' ...
;;;;   perf record -g -p PID -- sleep 2; perf report --sort comm,sym
;;;;
;;;; Code compiled from files goes to SBCL's immobile space, which the
;;;; collector never moves, so the map stays true; code compiled later into
;;;; the dynamic space may move, and is named only as it stood when the map
;;;; was written.  A Bazel-built executable cannot take it: its toplevel is
;;;; the program, which evaluates nothing.

(defun write-perf-map (&optional (path (format nil "/tmp/perf-~D.map" (sb-unix:unix-getpid))))
  "Write one line per code object, START SIZE NAME in perf's map format
(hexadecimal, no prefix), named after its first function.  Returns PATH."
  (with-open-file (out path :direction :output :if-exists :supersede)
    (sb-vm:map-allocated-objects
     (lambda (object widetag size)
       (declare (ignore size))
       (when (and (= widetag sb-vm:code-header-widetag)
                  (plusp (sb-kernel:code-n-entries object)))
         (format out "~X ~X ~A~%"
                 (sb-sys:sap-int (sb-kernel:code-instructions object))
                 (sb-kernel:%code-text-size object)
                 ;; One token a line: perf splits the name at nothing, but
                 ;; a newline would end it.
                 (substitute #\_ #\Newline
                             (princ-to-string
                              (sb-kernel:%simple-fun-name (sb-kernel:%code-entry-point object 0)))))))
     :all))
  path)
