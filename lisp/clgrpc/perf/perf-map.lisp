;;;; A map of this Lisp image's compiled functions for Linux perf, so that
;;;; `perf record` and `perf report` name Lisp frames instead of printing
;;;; bare addresses.  perf reads /tmp/perf-PID.map for code in anonymous
;;;; memory, which is where SBCL keeps it.  Unlike sb-sprof, perf samples
;;;; every thread from outside, with no signal handler in the process and no
;;;; per-thread sample buffer (sb-sprof maps a megabyte for each thread it
;;;; samples: a gigabyte of address space for a server holding a thousand
;;;; blocked handlers), and shows the kernel's share beside Lisp's.
;;;;
;;;; Load it into an image that loaded clgrpc from source (the source
;;;; registry of lisp/routeguide/tools/profile-server.sh), after the load
;;;; has warmed up, so that code compiled at run time (generic function
;;;; dispatch) is in the map too, and call WRITE-PERF-MAP:
;;;;
;;;;   sbcl --eval '(asdf:load-system "handlercost/server")' \
;;;;        --load lisp/clgrpc/perf/perf-map.lisp ... --eval '(write-perf-map)'
;;;;   perf record -g -p PID -- sleep 2; perf report --sort comm,sym
;;;;
;;;; On x86-64, code compiled from files goes to SBCL's immobile space,
;;;; which the collector never moves, so the map stays true; code in the
;;;; dynamic space (on x86-64 what is compiled at run time, elsewhere all of
;;;; it) may move, and is named only where it stood when the map was
;;;; written.  A Bazel-built executable cannot take it: its toplevel is the
;;;; program, which evaluates nothing.

(defun write-perf-map (&optional (path (format nil "/tmp/perf-~D.map" (sb-unix:unix-getpid))))
  "Write one line per function entry point, START SIZE NAME in perf's map
format (hexadecimal without a prefix; the name is the rest of the line),
each function running to the next entry point of its code object or to
the end of its code.  Returns PATH."
  ;; Listed first and written after: a function that walks the heap must
  ;; not allocate, and printing does.
  (let ((codes (sb-vm:list-allocated-objects :all :type sb-vm:code-header-widetag)))
    (with-open-file (out path :direction :output :if-exists :supersede)
      (with-standard-io-syntax
        (let ((*package* (find-package "KEYWORD"))
              (*print-pretty* nil)
              (*print-readably* nil))
          (dolist (code codes)
            (let* ((n (sb-kernel:code-n-entries code))
                   (end (+ (sb-sys:sap-int (sb-kernel:code-instructions code))
                           (sb-kernel:%code-text-size code)))
                   (starts (loop for i below n
                                 collect (sb-sys:sap-int
                                          (sb-vm:simple-fun-entry-sap (sb-kernel:%code-entry-point code i))))))
              (loop for i below n
                    for (start next) on starts
                    do (format out "~X ~X ~A~%" start (- (or next end) start)
                               ;; One line each: some names are strings of
                               ;; several lines.
                               (substitute #\Space #\Newline
                                           (prin1-to-string
                                            (sb-kernel:%simple-fun-name
                                             (sb-kernel:%code-entry-point code i))))))))))
      path)))
