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
