;;;; TCP sockets, over IPv4 or IPv6, and Unix domain stream sockets.
;;;;
;;;; sb-bsd-sockets creates, binds, accepts and connects; after that the
;;;; connection layer only needs the file descriptor.  Reads and writes are
;;;; direct read(2)/send(2) calls on pinned octet vectors: no Lisp stream, no
;;;; intermediate buffer, nothing consed per call.  Writes use MSG_NOSIGNAL so
;;;; a peer that went away yields EPIPE instead of a SIGPIPE.  Every accepted or
;;;; connected socket gets TCP_NODELAY: gRPC writes whole frames in one send,
;;;; and Nagle's algorithm would only hold small responses back.

(eval-when (:compile-toplevel :load-toplevel :execute)
  (require :sb-bsd-sockets))

(in-package #:clgrpc.net)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +msg-nosignal+ #x4000 "Linux MSG_NOSIGNAL.")
(defconstant +msg-dontwait+ #x40 "Linux MSG_DONTWAIT.")
(defconstant +shut-rd+ 0)
(defconstant +shut-wr+ 1)
(defconstant +shut-rdwr+ 2)

(defun resolve-host (host)
  "An address for HOST: an IPv4 (4 octets) or IPv6 (16) address vector, as
given or for a dotted quad, an IPv6 literal, \"localhost\" or a name (its
first address); or (:UNIX path) as given."
  (cond ((and (consp host) (eq (first host) :unix)) host)
        ((stringp host) (resolve-host-string host))
        ((vectorp host) host)
        (t (error "bad host ~S" host))))

(defun ipv6-literal-p (host)
  (and (find #\: host) (every (lambda (c) (or (digit-char-p c 16) (find c ":."))) host)))

(defun resolve-host-string (host)
  (cond ((string= host "localhost") (vector 127 0 0 1))
        ((every (lambda (c) (or (digit-char-p c) (char= c #\.))) host)
         (sb-bsd-sockets:make-inet-address host))
        ((ipv6-literal-p host) (sb-bsd-sockets:make-inet6-address host))
        ;; A name: its first IPv4 address if it has one (a channel to a
        ;; single host:port connects to one address; make-target-channel
        ;; balances over all of them).
        (t (let ((addresses (resolve-addresses host)))
             (or (find 4 addresses :key #'length) (first addresses))))))

(defun socket-fd (socket)
  (sb-bsd-sockets:socket-file-descriptor socket))

(defun socket-local-port (socket)
  (nth-value 1 (sb-bsd-sockets:socket-name socket)))

(defun tcp-listen (host port &key (backlog 1024))
  "A listening socket on HOST:PORT (port 0 picks a free one)."
  (let ((socket (make-instance 'sb-bsd-sockets:inet-socket :type :stream :protocol :tcp)))
    (handler-bind ((error (lambda (e) (declare (ignore e)) (sb-bsd-sockets:socket-close socket))))
      (setf (sb-bsd-sockets:sockopt-reuse-address socket) t)
      (sb-bsd-sockets:socket-bind socket (resolve-host host) port)
      (sb-bsd-sockets:socket-listen socket backlog))
    socket))

(defun tcp-accept (listener)
  "The next connection on LISTENER, with TCP_NODELAY set, or NIL once the
listener is shut down or closed.  Running out of descriptors or memory is
not the end of the listener: it backs off briefly and tries again, as
Go's net/http and grpc-go do."
  (loop
    (handler-case
        (let ((socket (sb-bsd-sockets:socket-accept listener)))
          (when socket
            (handler-case (setf (sb-bsd-sockets:sockopt-tcp-nodelay socket) t)
              (error () nil))           ; the peer already left; reading finds out
            (return socket)))
      (sb-bsd-sockets:interrupted-error () nil)
      ((or sb-bsd-sockets:invalid-argument-error sb-bsd-sockets:bad-file-descriptor-error) ()
        (return nil))
      (error ()
        (if (< (sb-bsd-sockets:socket-file-descriptor listener) 0)
            (return nil)
            (sleep 0.05))))))

(define-condition connect-timeout (error)
  ((host :initarg :host) (port :initarg :port))
  (:report (lambda (c s) (format s "connecting to ~A:~D timed out"
                                 (slot-value c 'host) (slot-value c 'port)))))

(define-condition connect-aborted (error)
  ((host :initarg :host) (port :initarg :port))
  (:report (lambda (c s) (format s "connecting to ~A:~D was abandoned"
                                 (slot-value c 'host) (slot-value c 'port)))))

(defconstant +connect-poll-seconds+ 1/10
  "How often a connect in progress asks whether to abandon it.")

(defun %new-stream-socket (address)
  (cond ((consp address) (make-instance 'sb-bsd-sockets:local-socket :type :stream))
        ((= (length address) 16) (make-instance 'sb-bsd-sockets:inet6-socket :type :stream :protocol :tcp))
        (t (make-instance 'sb-bsd-sockets:inet-socket :type :stream :protocol :tcp))))

(defun tcp-connect (host port &optional timeout abort-p)
  "A connected socket to HOST:PORT (RESOLVE-HOST's hosts; PORT is ignored
for (:UNIX path)), with TCP_NODELAY set on TCP.  TIMEOUT (seconds, NIL
for none) bounds the connect: past it this signals CONNECT-TIMEOUT.
ABORT-P, if given, is called while the connect is in progress, every
tenth of a second: once it returns true, this signals CONNECT-ABORTED.
The connect never blocks the thread beyond those bounds, however long the
kernel would retry an unanswered SYN."
  (let* ((address (resolve-host host))
         (socket (%new-stream-socket address))
         (give-up (and timeout (+ (get-internal-real-time)
                                  (ceiling (* (max timeout 0) internal-time-units-per-second))))))
    (handler-bind ((error (lambda (e) (declare (ignore e)) (sb-bsd-sockets:socket-close socket))))
      (setf (sb-bsd-sockets:non-blocking-mode socket) t)
      (handler-case (if (consp address)
                        (sb-bsd-sockets:socket-connect socket (second address))
                        (sb-bsd-sockets:socket-connect socket address port))
        (sb-bsd-sockets:operation-in-progress ()
          (loop
            (let ((left (and give-up (/ (- give-up (get-internal-real-time))
                                        internal-time-units-per-second))))
              (when (and left (<= left 0))
                (error 'connect-timeout :host host :port port))
              (when (sb-sys:wait-until-fd-usable (sb-bsd-sockets:socket-file-descriptor socket) :output
                                                 (float (if left (min left +connect-poll-seconds+)
                                                            +connect-poll-seconds+)
                                                        1d0))
                (return))
              (when (and abort-p (funcall abort-p))
                (error 'connect-aborted :host host :port port))))
          ;; Writable means connected or failed: only a connected socket
          ;; has a peer.
          (sb-bsd-sockets:socket-peername socket)))
      (setf (sb-bsd-sockets:non-blocking-mode socket) nil)
      (unless (consp address)
        (setf (sb-bsd-sockets:sockopt-tcp-nodelay socket) t)))
    socket))

(defun socket-close (socket)
  (ignore-errors (sb-bsd-sockets:socket-close socket))
  nil)

(defun fd-shutdown (fd &optional (how :both))
  "shutdown(2).  :BOTH also wakes a thread blocked reading (or accepting on) FD."
  (declare (type fixnum fd))
  (sb-alien:alien-funcall
   (sb-alien:extern-alien "shutdown" (function sb-alien:int sb-alien:int sb-alien:int))
   fd (ecase how (:input +shut-rd+) (:output +shut-wr+) (:both +shut-rdwr+)))
  nil)

(defun fd-read (fd buffer start end)
  "Read into BUFFER[START,END).  Returns the octet count, 0 at end of file,
or NIL on an error (reset connection, descriptor shut down)."
  (declare (type fixnum fd) (type octets buffer) (type index start end))
  (loop
    (multiple-value-bind (n errno)
        (sb-sys:with-pinned-objects (buffer)
          (sb-unix:unix-read fd (sb-sys:sap+ (sb-sys:vector-sap buffer) start)
                             (- end start)))
      (cond (n (return n))
            ((= errno sb-unix:eintr))   ; a GC stop or other signal: retry
            (t (return nil))))))

(declaim (inline %send))
(defun %send (fd buffer start end flags)
  "send(2) of BUFFER[START,END) with FLAGS: the octet count sent, or -1 (errno tells why)."
  (declare (type fixnum fd flags) (type octets buffer) (type index start end))
  (sb-sys:with-pinned-objects (buffer)
    (sb-alien:alien-funcall
     (sb-alien:extern-alien "send" (function sb-alien:long sb-alien:int
                                             sb-sys:system-area-pointer
                                             sb-alien:unsigned-long
                                             sb-alien:int))
     fd (sb-sys:sap+ (sb-sys:vector-sap buffer) start) (- end start) flags)))

(defun fd-write (fd buffer start end)
  "Write all of BUFFER[START,END), blocking as needed.  Returns T, or NIL if
the connection failed."
  (declare (type fixnum fd) (type octets buffer) (type index start end))
  (loop while (< start end)
        do (let ((n (%send fd buffer start end +msg-nosignal+)))
             (declare (type fixnum n))
             (if (minusp n)
                 (unless (= (sb-alien:get-errno) sb-unix:eintr)
                   (return-from fd-write nil))
                 (incf start n))))
  t)

(defun fd-write-some (fd buffer start end)
  "Write what the socket takes now of BUFFER[START,END), without blocking
(MSG_DONTWAIT).  Returns the octet count written (0 if the socket buffer is
full), or NIL if the connection failed."
  (declare (type fixnum fd) (type octets buffer) (type index start end))
  (let ((done start))
    (declare (type index done))
    (loop while (< done end)
          do (let ((n (%send fd buffer done end (logior +msg-nosignal+ +msg-dontwait+))))
               (declare (type fixnum n))
               (if (minusp n)
                   (let ((errno (sb-alien:get-errno)))
                     (cond ((= errno sb-unix:eintr))
                           ((= errno sb-unix:ewouldblock) (return))
                           (t (return-from fd-write-some nil))))
                   (incf done n))))
    (- done start)))

(defun fd-write-some-sap (fd sap length)
  "Like FD-WRITE-SOME, for LENGTH octets of foreign memory at SAP (which
the caller keeps alive and unmoved).  Returns the octet count written (0
if the socket buffer is full), or NIL if the connection failed."
  (declare (type fixnum fd length) (type sb-sys:system-area-pointer sap))
  (let ((done 0))
    (declare (type fixnum done))
    (loop while (< done length)
          do (let ((n (sb-alien:alien-funcall
                       (sb-alien:extern-alien "send" (function sb-alien:long sb-alien:int
                                                               sb-sys:system-area-pointer
                                                               sb-alien:unsigned-long
                                                               sb-alien:int))
                       fd (sb-sys:sap+ sap done) (- length done)
                       (logior +msg-nosignal+ +msg-dontwait+))))
               (declare (type fixnum n))
               (if (minusp n)
                   (let ((errno (sb-alien:get-errno)))
                     (cond ((= errno sb-unix:eintr))
                           ((= errno sb-unix:ewouldblock) (return))
                           (t (return-from fd-write-some-sap nil))))
                   (incf done n))))
    done))

(defun fd-wait-readable (fd timeout-seconds)
  "True when FD has input (or EOF) within TIMEOUT-SECONDS."
  (sb-sys:wait-until-fd-usable fd :input timeout-seconds nil))

(defun fd-recv-some (fd buffer start end)
  "Read what the socket has now into BUFFER[START,END), without blocking
(MSG_DONTWAIT).  Returns the octet count, 0 at end of file, :AGAIN when
nothing is there yet, or NIL on an error (reset connection)."
  (declare (type fixnum fd) (type octets buffer) (type index start end))
  (loop
    (let ((n (sb-sys:with-pinned-objects (buffer)
               (sb-alien:alien-funcall
                (sb-alien:extern-alien "recv" (function sb-alien:long sb-alien:int
                                                        sb-sys:system-area-pointer
                                                        sb-alien:unsigned-long sb-alien:int))
                fd (sb-sys:sap+ (sb-sys:vector-sap buffer) start) (- end start)
                +msg-dontwait+))))
      (declare (type fixnum n))
      (if (>= n 0)
          (return n)
          (let ((errno (sb-alien:get-errno)))
            (cond ((= errno sb-unix:eintr))
                  ((= errno sb-unix:ewouldblock) (return :again))
                  (t (return nil))))))))

(defun raise-open-file-limit ()
  "Raise this process's soft RLIMIT_NOFILE to its hard limit, as Go's
runtime does at start: a server holding thousands of connections needs a
descriptor each.  Returns the new soft limit."
  (sb-alien:with-alien ((limit (array (sb-alien:unsigned 64) 2)))
    (let ((sap (sb-alien:alien-sap limit))
          (rlimit-nofile 7))
      (when (zerop (the fixnum (sb-alien:alien-funcall
                                (sb-alien:extern-alien "getrlimit" (function sb-alien:int sb-alien:int
                                                                             sb-sys:system-area-pointer))
                                rlimit-nofile sap)))
        (setf (sb-sys:sap-ref-64 sap 0) (sb-sys:sap-ref-64 sap 8))
        (sb-alien:alien-funcall
         (sb-alien:extern-alien "setrlimit" (function sb-alien:int sb-alien:int
                                                      sb-sys:system-area-pointer))
         rlimit-nofile sap)
        (sb-sys:sap-ref-64 sap 0)))))
