;;;; A diagnostic method for tests that attack a server and must see what
;;;; it holds: the heap in use.  RSS cannot show it, since a large vector
;;;; whose pages were never touched is not resident, and a heap that is a
;;;; fixed reservation fails once it is full, whatever RSS says.

(in-package #:clgrpc.grpc)

(defparameter +heap-report-path+ "/clgrpc.Diagnostics/HeapInUse"
  "Request: any message (google.protobuf.Empty).  Response: a
google.protobuf.UInt64Value of the octets of heap in use after a full
collection.")

(defun %encode-uint64-value (octets buf)
  "OCTETS as google.protobuf.UInt64Value: field 1, a varint."
  (obuf-write-u8 buf #x08)
  (clgrpc.protobuf:write-uint64 buf octets))

(defun register-heap-report (server)
  "Serve +HEAP-REPORT-PATH+ on SERVER.  Each call collects all generations
first, which stops every thread for a moment: for tests and diagnosis, not
for monitoring under load."
  (register-method server +heap-report-path+
                   (lambda (request call)
                     (declare (ignore request call))
                     (sb-ext:gc :full t)
                     (sb-kernel:dynamic-usage))
                   :response-encoder #'%encode-uint64-value))

;;; A server program's heap, on request: a benchmark's load generator asks
;;; a server after each repetition what its heap holds, beside the RSS it
;;; reads itself, by sending SIGWINCH (go/bench/serverproc).  SIGWINCH,
;;; because SBCL defers its handler to a safe point, as it does SIGINT's
;;; (SIGUSR1's would run in the middle of an allocation or a collection),
;;; and a process that does not handle it ignores it.  The Go
;;; servers answer the same way (go/internal/runtimeline).

(defun heap-report-line ()
  "\"heap live=N\": the octets of heap in use right after the last garbage
collection (HEAP-AFTER-LAST-COLLECTION), or now before the first.  It
counts what was live and the garbage of the older generations that
collection left alone, so it is at least the live heap, not a census."
  (format nil "heap live=~D" (or (heap-after-last-collection) (sb-kernel:dynamic-usage))))

(sb-ext:defglobal *stop-requested* nil)
(sb-ext:defglobal *heap-line-requested* nil)

(defconstant +program-poll-seconds+ 0.01
  "How often a waiting server program looks for a request: a heap line is
answered within this, and the wake-ups cost nothing measurable.")

(defun serve-until-stopped (server announcement)
  "What a server program does once SERVER is started: print ANNOUNCEMENT
(its \"listening on HOST:PORT\" line) and SERVER-RUNTIME-LINE, ended by
heap_report=sigwinch; then wait for SIGINT or SIGTERM, answering each SIGWINCH
with HEAP-REPORT-LINE on *STANDARD-OUTPUT*.  Returns once a stop is
requested; stopping SERVER is the caller's.  The signal handlers only set
flags: they may interrupt any thread, even one holding a lock that printing
or the shutdown needs."
  (setf *stop-requested* nil *heap-line-requested* nil)
  (flet ((request-stop (signal info context)
           (declare (ignore signal info context))
           (setf *stop-requested* t))
         (request-heap-line (signal info context)
           (declare (ignore signal info context))
           (setf *heap-line-requested* t)))
    (sb-sys:enable-interrupt sb-unix:sigint #'request-stop)
    (sb-sys:enable-interrupt sb-unix:sigterm #'request-stop)
    (sb-sys:enable-interrupt sb-unix:sigwinch #'request-heap-line))
  (format t "~A~%~A heap_report=sigwinch~%" announcement (server-runtime-line server))
  (finish-output)
  (loop until *stop-requested*
        do (when *heap-line-requested*
             (setf *heap-line-requested* nil)
             (format t "~A~%" (heap-report-line))
             (finish-output))
           (sleep +program-poll-seconds+))
  (values))
