;;;; What the HTTP/2 reactor calls for a server's requests (connection lock
;;;; held, on the reactor): a new request, its messages, its end, a reset,
;;;; and the deadline the scheduler enforces.
;;;;
;;;; Each call claims one of its connection's handler slots from its HEADERS
;;;; until its handler is over (or, never started, until the call ends), so
;;;; streams the peer resets cannot pile up work.  A call reset before its
;;;; handler starts never runs.  Requests are decoded by the thread that
;;;; runs their handler, never by the reactor.

(in-package #:clgrpc.grpc)

(defun %server-got-request (call octets length compressed)
  "The request of a unary or server-streaming call, as octets: its worker
decodes it."
  (if (> (call-received call) 1)
      (%server-fail call +internal+ "more than one request message for a unary request")
      (setf (call-request call) octets
            (call-request-length call) length
            (call-last-compressed call) compressed)))

(defun %server-inbound-end (call)
  (setf (call-inbound-done call) t)
  (unless (call-status call)
    (case (call-kind call)
      ((:unary :server-streaming)
       (if (= (call-received call) 1)
           (cond ((not (eq (call-kind call) :unary))
                  (%admit-streaming call (clgrpc.http2:connection-user (call-conn call))))
                 ((and (method-entry-inline (call-handler call))
                       (clgrpc.http2:reader-thread-p (call-conn call)))
                  ;; Run once the reactor has released the lock.
                  (setf (call-dispatched call) t)
                  (clgrpc.http2:defer-to-reader (call-conn call) #'run-inline-server-call call))
                 (t (%run-on-executor call)))
           (%server-fail call +internal+ "no request message")))
      (t (if (each-message-call-p call)
             (schedule-drain call)
             (broadcast-if-waiting (call-waiters call) (call-cv call)))))))

(defun server-deadline-expired (call)
  "Scheduler thread: the client's deadline passed."
  (let ((conn (call-conn call)))
    (clgrpc.http2:with-connection-lock (conn)
      (unless (call-status call)
        (%send-trailers call +deadline-exceeded+ "deadline exceeded" nil
                        :reset-code clgrpc.http2:+cancel+)
        (clgrpc.http2:request-flush conn)))))

(defun %observe-call (server path registered)
  "The finish functions SERVER's call observers return for a request of
PATH (REGISTERED: a method SERVER serves)."
  (loop for observer in (server-call-observers server)
        for finish = (funcall (the function observer) path registered)
        when finish collect finish))

(defun %observed-refusal (server path code)
  "A request of PATH answered with CODE before any call was made: the
observers see it start and end."
  (dolist (finish (%observe-call server path (and (gethash path (server-methods server)) t)))
    (funcall finish code nil)))

(defun start-server-call (server conn stream headers end-stream)
  (let ((method nil) (path nil) (content-type nil) (timeout nil) (encoding nil)
        (accept-encoding nil))
    (dolist (h headers)
      (let ((name (car h)))
        (declare (type simple-string name))
        (cond ((char= (char name 0) #\:)
               (cond ((str= name ":path") (setf path (cdr h)))
                     ((str= name ":method") (setf method (cdr h)))))
              ((str= name "content-type") (setf content-type (cdr h)))
              ((str= name "grpc-timeout") (setf timeout (parse-grpc-timeout (cdr h))))
              ((str= name "grpc-encoding") (setf encoding (cdr h)))
              ((str= name "grpc-accept-encoding") (setf accept-encoding (cdr h))))))
    (cond
      ((non-grpc-status method content-type)
       (start-plain-request conn stream (non-grpc-status method content-type) end-stream))
      ((and encoding (not (supported-encoding-p encoding)))
       (%trailers-only conn stream "200" +unimplemented+
                       (format nil "grpc-encoding ~A is not supported" encoding)
                       (list (cons "grpc-accept-encoding" +accepted-encodings+)))
       (%observed-refusal server path +unimplemented+))
      (t
       (let ((entry (gethash path (server-methods server))))
         (if (null entry)
             (let* ((slash (position #\/ path :start 1))
                    (service (and slash (subseq path 1 slash))))
               (%trailers-only conn stream "200" +unimplemented+
                               (if (and service (gethash service (server-services server)))
                                   (format nil "unknown method ~A for service ~A"
                                           (subseq path (1+ slash)) service)
                                   (format nil "unknown service ~A" (or service path))))
               (%observed-refusal server path +unimplemented+))
             (let ((call (%make-call :role :server :kind (method-entry-kind entry)
                                     :conn conn :stream stream :path path
                                     :encoder (method-entry-encoder entry)
                                     :decoder (method-entry-decoder entry)
                                     :handler entry
                                     :max-receive-size (server-max-receive-message-size server)
                                     :max-send-size (server-max-send-message-size server)
                                     :recv-gzip (equal encoding "gzip")
                                     :peer-accepts-gzip (accepts-gzip-p accept-encoding)
                                     :%metadata (headers-to-metadata headers)
                                     :%start-us (now-us))))
               (setf (clgrpc.http2:h2-stream-user stream) call)
               (dolist (finish (%observe-call server path t))
                 (push (let ((finish finish)) (lambda (call) (funcall finish (call-status call) call)))
                       (call-finish-hooks call)))
               (clgrpc.http2:claim-handler-slot conn stream)
               (when timeout
                 (let ((deadline (+ (now-us) timeout)))
                   (setf (call-%deadline call) deadline
                         (call-timer call) (schedule-timer #'server-deadline-expired call
                                                           deadline))))
               (case (call-kind call)
                 ;; A handler run per message starts with the first one.
                 (:bidi (unless (method-entry-each-message entry)
                          (%admit-streaming call server)))
                 (:client-streaming
                  (cond ((method-entry-each-message entry))
                        ((and (clgrpc.http2:reader-thread-p conn) (method-entry-inline entry))
                         (clgrpc.http2:defer-to-reader conn #'%start-client-stream call))
                        (t (%admit-streaming call server)))))
               (when end-stream
                 (%server-inbound-end call)))))))))

(defun server-on-headers (conn stream headers end-stream)
  (let ((call (clgrpc.http2:h2-stream-user stream)))
    (cond ((null call)
           (start-server-call (clgrpc.http2:connection-user conn) conn stream headers end-stream))
          ((plain-request-p call)       ; its trailers
           (when end-stream
             (%plain-answer conn stream (plain-request-status call))))
          (end-stream                   ; trailers from the client end its messages
           (%server-inbound-end call)))))

(defun server-on-data (conn stream octets start end end-stream)
  (let ((call (clgrpc.http2:h2-stream-user stream)))
    (when (plain-request-p call)
      (plain-request-data conn stream call start end end-stream)
      (return-from server-on-data nil))
    (when call
      (unless (call-status call)
        (%feed call conn stream octets start end))
      (when end-stream
        (unless (or (call-status call) (zerop (call-asm-prefix call)))
          (%server-fail call +internal+ "stream ended inside a message"))
        (%server-inbound-end call)))))

(defun server-on-reset (conn stream code origin)
  (declare (ignore conn))
  (let ((call (clgrpc.http2:h2-stream-user stream)))
    (when (and (call-p call) (not (call-status call)))
      (setf (call-status call) (if (eq origin :peer) (status-from-http2-error code) +unavailable+)
            (call-status-message call) (case origin
                                         (:peer "cancelled by the client")
                                         (:connection "connection closed")
                                         (t "stream reset")))
      (%call-over call)
      (%release-undispatched call)
      (broadcast-if-waiting (call-waiters call) (call-cv call)))))

