;;;; Every address of a host name, IPv4 and IPv6, from getaddrinfo(3): what
;;;; gRPC's dns resolver gives a channel (every A and AAAA record).
;;;; sb-bsd-sockets' GET-HOST-BY-NAME asks for IPv4 only.

(in-package #:clgrpc.net)

(defconstant +af-unspec+ 0)
(defconstant +af-inet+ 2)
(defconstant +af-inet6+ 10)
(defconstant +sock-stream+ 1)

;;; struct addrinfo on Linux (LP64): ai_flags, ai_family, ai_socktype,
;;; ai_protocol (ints), ai_addrlen (socklen_t, padded), ai_addr,
;;; ai_canonname, ai_next.
(defconstant +ai-family-offset+ 4)
(defconstant +ai-addr-offset+ 24)
(defconstant +ai-next-offset+ 40)
(defconstant +addrinfo-size+ 48)

(defun resolve-addresses (name)
  "Every address NAME resolves to, as address vectors (4 octets for IPv4,
16 for IPv6), each once, in getaddrinfo's order.  Signals an error naming
NAME when it resolves to none."
  (declare (optimize (speed 1) (safety 1)))
  (let ((hints (sb-alien:make-alien (sb-alien:unsigned 8) +addrinfo-size+))
        (result (sb-alien:make-alien sb-sys:system-area-pointer 1)))
    (unwind-protect
         (let ((hints-sap (sb-alien:alien-sap hints)))
           (dotimes (i +addrinfo-size+) (setf (sb-sys:sap-ref-8 hints-sap i) 0))
           (setf (sb-sys:signed-sap-ref-32 hints-sap +ai-family-offset+) +af-unspec+
                 (sb-sys:signed-sap-ref-32 hints-sap 8) +sock-stream+)
           (let ((code (sb-alien:alien-funcall
                        (sb-alien:extern-alien "getaddrinfo"
                                               (function sb-alien:int sb-alien:c-string sb-alien:c-string
                                                         sb-sys:system-area-pointer sb-sys:system-area-pointer))
                        name nil hints-sap (sb-alien:alien-sap result))))
             (unless (zerop code)
               (error "cannot resolve ~S (getaddrinfo error ~D)" name code))
             (let ((head (sb-sys:sap-ref-sap (sb-alien:alien-sap result) 0))
                   (addresses '()))
               (unwind-protect
                    (loop for info = head then (sb-sys:sap-ref-sap info +ai-next-offset+)
                          until (zerop (sb-sys:sap-int info))
                          do (let ((family (sb-sys:signed-sap-ref-32 info +ai-family-offset+))
                                   (addr (sb-sys:sap-ref-sap info +ai-addr-offset+)))
                               (flet ((octets (offset n)
                                        (let ((v (make-array n :element-type '(unsigned-byte 8))))
                                          (dotimes (i n v) (setf (aref v i) (sb-sys:sap-ref-8 addr (+ offset i)))))))
                                 (cond ((= family +af-inet+) (pushnew (octets 4 4) addresses :test #'equalp))
                                       ((= family +af-inet6+) (pushnew (octets 8 16) addresses :test #'equalp))))))
                 (sb-alien:alien-funcall
                  (sb-alien:extern-alien "freeaddrinfo" (function sb-alien:void sb-sys:system-area-pointer))
                  head))
               (or (nreverse addresses)
                   (error "~S resolves to no IPv4 or IPv6 address" name)))))
      (sb-alien:free-alien hints)
      (sb-alien:free-alien result))))
