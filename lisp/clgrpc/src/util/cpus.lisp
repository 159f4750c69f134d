;;;; How many CPUs this process may use.

(in-package #:clgrpc.util)

(defun usable-cpu-count ()
  "The CPUs this process may run on: its affinity mask, which a benchmark's
CPU placement or a cpuset narrows, as Go counts them for GOMAXPROCS; else
the online CPUs."
  (let ((mask (make-array 128 :element-type '(unsigned-byte 8) :initial-element 0)))
    (sb-sys:with-pinned-objects (mask)
      (if (zerop (sb-alien:alien-funcall
                  (sb-alien:extern-alien "sched_getaffinity"
                                         (function sb-alien:int sb-alien:int sb-alien:unsigned-long
                                                   sb-sys:system-area-pointer))
                  0 (length mask) (sb-sys:vector-sap mask)))
          (max 1 (loop for octet across mask sum (logcount octet)))
          (max 1 (the fixnum (sb-alien:alien-funcall
                              (sb-alien:extern-alien "sysconf" (function sb-alien:long sb-alien:int))
                              84)))))))         ; _SC_NPROCESSORS_ONLN on Linux
