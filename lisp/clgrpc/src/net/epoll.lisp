;;;; Linux epoll(7) and eventfd(2) through sb-alien.
;;;;
;;;; The reactors (http2/reactor-loop.lisp) wait for many sockets in a
;;;; few threads with these.  It uses level-triggered events: a reactor reads
;;;; once per readiness event and goes round every ready connection before
;;;; reading the same one again, so one busy peer cannot starve the others.
;;;;
;;;; struct epoll_event is packed on x86-64 (12 octets: events, then the
;;;; 64-bit data word at offset 4) and naturally aligned elsewhere (16
;;;; octets, data at offset 8); both layouts are written and read by hand
;;;; through system-area pointers.

(in-package #:clgrpc.net)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +epollin+ #x001)
(defconstant +epollout+ #x004)
(defconstant +epollerr+ #x008)
(defconstant +epollhup+ #x010)
(defconstant +epollrdhup+ #x2000)
(defconstant +epoll-ctl-add+ 1)
(defconstant +epoll-ctl-del+ 2)
(defconstant +epoll-ctl-mod+ 3)
(defconstant +o-cloexec+ #o2000000)
(defconstant +o-nonblock+ #o4000)

(defconstant +epoll-event-size+ #+x86-64 12 #-x86-64 16)
(defconstant +epoll-data-offset+ #+x86-64 4 #-x86-64 8)

(defun %check (result what)
  (declare (type fixnum result))
  (when (minusp result)
    (error "~A failed: ~A" what (sb-int:strerror (sb-alien:get-errno))))
  result)

(defun epoll-create ()
  "A new epoll descriptor (close-on-exec)."
  (%check (sb-alien:alien-funcall
           (sb-alien:extern-alien "epoll_create1" (function sb-alien:int sb-alien:int))
           +o-cloexec+)
          "epoll_create1"))

(defun epoll-control (epfd op fd events)
  "epoll_ctl(2): OP is :ADD, :MODIFY or :DELETE; the event's data is FD.
Returns T, or NIL when the kernel refuses (for example a descriptor already
closed)."
  (declare (type fixnum epfd fd events))
  (sb-alien:with-alien ((event (array (sb-alien:unsigned 8) 16)))
    (let ((sap (sb-alien:alien-sap event)))
      (setf (sb-sys:sap-ref-32 sap 0) events
            (sb-sys:sap-ref-64 sap +epoll-data-offset+) fd)
      (>= (the fixnum
               (sb-alien:alien-funcall
                (sb-alien:extern-alien "epoll_ctl"
                                       (function sb-alien:int sb-alien:int sb-alien:int
                                                 sb-alien:int sb-sys:system-area-pointer))
                epfd (ecase op
                       (:add +epoll-ctl-add+) (:modify +epoll-ctl-mod+) (:delete +epoll-ctl-del+))
                fd sap))
          0))))

(defstruct (epoll-events (:constructor %make-epoll-events (sap capacity)))
  "A malloc'd array of struct epoll_event for EPOLL-WAIT (never moved by GC)."
  (sap (sb-sys:int-sap 0) :type sb-sys:system-area-pointer)
  (capacity 0 :type fixnum))

(defun make-epoll-events (capacity)
  (%make-epoll-events
   (sb-alien:alien-sap (sb-alien:make-alien (sb-alien:unsigned 8)
                                            (* capacity +epoll-event-size+)))
   capacity))

(defun epoll-wait (epfd events timeout-ms)
  "Wait up to TIMEOUT-MS for events (-1: forever).  Returns how many entries
of EVENTS are filled; 0 on timeout or when a signal (a GC stop) interrupted
the wait."
  (declare (type fixnum epfd timeout-ms) (type epoll-events events))
  (let ((n (sb-alien:alien-funcall
            (sb-alien:extern-alien "epoll_wait"
                                   (function sb-alien:int sb-alien:int sb-sys:system-area-pointer
                                             sb-alien:int sb-alien:int))
            epfd (epoll-events-sap events) (epoll-events-capacity events) timeout-ms)))
    (declare (type fixnum n))
    (cond ((>= n 0) n)
          ((= (sb-alien:get-errno) sb-unix:eintr) 0)
          (t (%check n "epoll_wait")))))

(declaim (inline epoll-event-flags epoll-event-fd))
(defun epoll-event-flags (events i)
  (declare (type epoll-events events) (type fixnum i))
  (sb-sys:sap-ref-32 (epoll-events-sap events) (* i +epoll-event-size+)))

(defun epoll-event-fd (events i)
  (declare (type epoll-events events) (type fixnum i))
  (the fixnum (sb-sys:sap-ref-64 (epoll-events-sap events)
                                 (+ (* i +epoll-event-size+) +epoll-data-offset+))))

;;; eventfd: how other threads wake a reactor blocked in epoll_wait.

(defun eventfd-create ()
  (%check (sb-alien:alien-funcall
           (sb-alien:extern-alien "eventfd" (function sb-alien:int sb-alien:unsigned-int sb-alien:int))
           0 (logior +o-cloexec+ +o-nonblock+))
          "eventfd"))

(defmacro %eventfd-io (name fd &optional (value 0))
  "The read(2) or write(2) (NAME) of one 64-bit counter value on FD."
  `(sb-alien:with-alien ((word (sb-alien:unsigned 64)))
     (setf word ,value)
     (sb-alien:alien-funcall
      (sb-alien:extern-alien ,name (function sb-alien:long sb-alien:int
                                             sb-sys:system-area-pointer sb-alien:unsigned-long))
      ,fd (sb-alien:alien-sap (sb-alien:addr word)) 8)
     nil))

(defun eventfd-signal (fd)
  (declare (type fixnum fd))
  (%eventfd-io "write" fd 1))

(defun eventfd-drain (fd)
  (declare (type fixnum fd))
  (%eventfd-io "read" fd))

(defun fd-close (fd)
  (declare (type fixnum fd))
  (sb-alien:alien-funcall (sb-alien:extern-alien "close" (function sb-alien:int sb-alien:int)) fd)
  nil)
