;;;; Connection-layer tests over real loopback sockets: the SETTINGS
;;;; exchange, streams and flow control between two of our connections, and
;;;; malformed input from a raw peer, which must be answered with the GOAWAY or
;;;; RST_STREAM RFC 9113 prescribes -- never a crash or a hang.

(in-package #:clgrpc.tests)

(def-suite :clgrpc.connection :in :clgrpc)
(in-suite :clgrpc.connection)

(defun octets-range (n)
  (let ((v (make-octets n)))
    (dotimes (i n v) (setf (aref v i) (mod (* i 7) 251)))))

;;; ------------------------------------------------------------------
;;; Preface and SETTINGS

(test server-sends-settings-and-acks-ours
  (with-echo-server (server)
    (with-raw-peer (peer server :preface nil)
      (raw-preface peer (list (cons clgrpc.http2:+settings-initial-window-size+ 100000)))
      (let ((settings (raw-expect peer (lambda (f) (and (= (clgrpc.http2:frame-type f)
                                                           clgrpc.http2:+frame-settings+)
                                                        (not (clgrpc.http2:frame-ack-p f)))))))
        (is (not (symbolp settings)))
        (is (equal 1000 (cdr (assoc clgrpc.http2:+settings-max-concurrent-streams+
                                    (clgrpc.http2:frame-settings settings))))))
      (let ((ack (raw-expect peer (lambda (f) (and (= (clgrpc.http2:frame-type f)
                                                      clgrpc.http2:+frame-settings+)
                                                   (clgrpc.http2:frame-ack-p f))))))
        (is (not (symbolp ack)))))))

(test ping-is-answered
  (with-echo-server (server)
    (with-raw-peer (peer server)
      (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-ping-frame b #x0102030405060708)))
      (let ((f (raw-expect peer (frame-of-type clgrpc.http2:+frame-ping+))))
        (is (not (symbolp f)))
        (is (clgrpc.http2:frame-ack-p f))
        (is (= #x0102030405060708 (clgrpc.http2:frame-opaque-data f)))))))

(test request-and-echo
  (with-echo-server (server)
    (with-raw-peer (peer server)
      (raw-headers peer 1)
      (raw-data peer 1 (latin1-to-octets "hello") :end-stream t)
      (let ((h (raw-expect peer (frame-of-type clgrpc.http2:+frame-headers+ 1)))
            (d (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+ 1))))
        (is (not (symbolp h)))
        (is (equal '((":status" . "200"))
                   (clgrpc.hpack:decode-header-block
                    (clgrpc.hpack:make-decoder) (clgrpc.http2:frame-data h)
                    (clgrpc.http2:frame-data-start h) (clgrpc.http2:frame-data-end h))))
        (is (string= "hello" (octets-to-latin1 (clgrpc.http2:frame-data d)
                                               (clgrpc.http2:frame-data-start d)
                                               (clgrpc.http2:frame-data-end d))))
        (is (clgrpc.http2:frame-end-stream-p d))))))

(test continuation-assembly
  (with-echo-server (server)
    (with-raw-peer (peer server)
      (let* ((block (raw-header-block peer))
             (half (floor (length block) 2)))
        (raw-send-obuf peer (lambda (b)
                              (clgrpc.http2:write-headers-frame b 1 block :end-headers nil
                                                                          :end-stream t :end half)
                              (clgrpc.http2:write-continuation-frame b 1 block :start half)))
        (is (not (symbolp (raw-expect peer (frame-of-type clgrpc.http2:+frame-headers+ 1)))))
        (let ((d (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+ 1))))
          (is (not (symbolp d)))
          (is (clgrpc.http2:frame-end-stream-p d)))))))

;;; ------------------------------------------------------------------
;;; Connection errors: GOAWAY with the right code, then close

(defmacro connection-error-test (name code &body sends)
  `(test ,name
     (with-echo-server (server)
       (with-raw-peer (peer server)
         ,@sends
         (is (equal ,code (raw-expect-goaway peer)))
         (is (eq :eof (raw-expect-eof peer)))))))

(test bad-preface
  (with-echo-server (server)
    (with-raw-peer (peer server :preface nil)
      (raw-send peer (latin1-to-octets (format nil "GET / HTTP/1.1~C~CHost: x~C~C~C~C"
                                               #\Return #\Newline #\Return #\Newline
                                               #\Return #\Newline)))
      (is (equal "PROTOCOL_ERROR" (raw-expect-goaway peer)))
      (is (eq :eof (raw-expect-eof peer))))))

(test first-frame-not-settings
  (with-echo-server (server)
    (with-raw-peer (peer server :preface nil)
      (raw-send peer clgrpc.http2:+connection-preface+)
      (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-ping-frame b 1)))
      (is (equal "PROTOCOL_ERROR" (raw-expect-goaway peer))))))

(connection-error-test frame-too-large "FRAME_SIZE_ERROR"
  (raw-send peer (raw-frame-bytes 16385 clgrpc.http2:+frame-data+ 0 1)))

(connection-error-test data-on-stream-zero "PROTOCOL_ERROR"
  (raw-send peer (raw-frame-bytes 4 clgrpc.http2:+frame-data+ 0 0)))

(connection-error-test data-on-idle-stream "PROTOCOL_ERROR"
  (raw-data peer 5 (octets-of 1 2 3)))

(connection-error-test headers-on-even-stream "PROTOCOL_ERROR"
  (raw-headers peer 2 :end-stream t))

(connection-error-test decreasing-stream-id "PROTOCOL_ERROR"
  (raw-headers peer 5 :end-stream t)
  (raw-headers peer 3 :end-stream t))

(connection-error-test headers-on-closed-stream "STREAM_CLOSED"
  (raw-headers peer 1 :end-stream t)
  ;; wait for the response so the stream is really closed
  (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+ 1))
  (raw-headers peer 1 :end-stream t))

(connection-error-test continuation-interleaved "PROTOCOL_ERROR"
  (let ((block (raw-header-block peer)))
    (raw-send-obuf peer (lambda (b)
                          (clgrpc.http2:write-headers-frame b 1 block :end-headers nil)
                          (clgrpc.http2:write-ping-frame b 7)))))

(connection-error-test continuation-other-stream "PROTOCOL_ERROR"
  (let ((block (raw-header-block peer)))
    (raw-send-obuf peer (lambda (b)
                          (clgrpc.http2:write-headers-frame b 1 block :end-headers nil :end 2)
                          (clgrpc.http2:write-continuation-frame b 3 block :start 2)))))

(connection-error-test continuation-without-headers "PROTOCOL_ERROR"
  (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-continuation-frame b 1 (octets-of #x82)))))

(connection-error-test hpack-garbage "COMPRESSION_ERROR"
  ;; index 70 is beyond the static table and the (empty) dynamic table
  (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-headers-frame b 1 (octets-of #xc6)))))

(connection-error-test settings-bad-length "FRAME_SIZE_ERROR"
  (raw-send peer (raw-frame-bytes 5 clgrpc.http2:+frame-settings+ 0 0)))

(connection-error-test settings-ack-with-payload "FRAME_SIZE_ERROR"
  (raw-send peer (raw-frame-bytes 6 clgrpc.http2:+frame-settings+ 1 0)))

(connection-error-test settings-window-too-large "FLOW_CONTROL_ERROR"
  (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-settings-frame
                                   b (list (cons clgrpc.http2:+settings-initial-window-size+
                                                 #x80000000))))))

(connection-error-test settings-on-stream "PROTOCOL_ERROR"
  (raw-send peer (raw-frame-bytes 0 clgrpc.http2:+frame-settings+ 0 1)))

(connection-error-test connection-window-overflow "FLOW_CONTROL_ERROR"
  (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-window-update-frame b 0 #x7fffffff))))

(connection-error-test window-update-zero-on-connection "PROTOCOL_ERROR"
  (raw-send peer (raw-frame-bytes 4 clgrpc.http2:+frame-window-update+ 0 0)))

(connection-error-test push-promise-from-client "PROTOCOL_ERROR"
  (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-push-promise-frame b 1 2 (octets-of #x82)))))

(connection-error-test rst-stream-on-idle "PROTOCOL_ERROR"
  (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-rst-stream-frame b 9 8))))

(connection-error-test ping-bad-length "FRAME_SIZE_ERROR"
  (raw-send peer (raw-frame-bytes 7 clgrpc.http2:+frame-ping+ 0 0)))

(connection-error-test goaway-on-stream "PROTOCOL_ERROR"
  (raw-send peer (raw-frame-bytes 8 clgrpc.http2:+frame-goaway+ 0 1)))

;;; ------------------------------------------------------------------
;;; Stream errors: RST_STREAM, and the connection keeps working

(defun still-serving-p (peer stream-id)
  "A fresh request on STREAM-ID still gets its echo."
  (raw-headers peer stream-id)
  (raw-data peer stream-id (octets-of 42) :end-stream t)
  (let ((d (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+ stream-id))))
    (and (not (symbolp d)) (clgrpc.http2:frame-end-stream-p d))))

(test data-after-end-stream
  (with-echo-server (server)
    (with-raw-peer (peer server)
      (raw-headers peer 1)
      (raw-data peer 1 (octets-of 1) :end-stream t)
      (raw-data peer 1 (octets-of 2))
      (is (equal "STREAM_CLOSED" (raw-expect-rst peer 1)))
      (is (still-serving-p peer 3)))))

(test stream-window-exceeded
  (with-echo-server (server :initial-window-size 16384 :max-frame-size 32768)
    (with-raw-peer (peer server)
      (raw-headers peer 1)
      ;; within the connection window, over the 16384 stream window
      (raw-data peer 1 (make-octets 20000))
      (is (equal "FLOW_CONTROL_ERROR" (raw-expect-rst peer 1)))
      (is (still-serving-p peer 3)))))

(test window-update-zero-on-stream
  (with-echo-server (server)
    (with-raw-peer (peer server)
      (raw-headers peer 1)
      (raw-send peer (raw-frame-bytes 4 clgrpc.http2:+frame-window-update+ 0 1))
      (is (equal "PROTOCOL_ERROR" (raw-expect-rst peer 1)))
      (is (still-serving-p peer 3)))))

(test stream-window-overflow
  (with-echo-server (server)
    (with-raw-peer (peer server)
      (raw-headers peer 1)
      (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-window-update-frame b 1 #x7fffffff)))
      (is (equal "FLOW_CONTROL_ERROR" (raw-expect-rst peer 1)))
      (is (still-serving-p peer 3)))))

(test max-concurrent-streams-refused
  (with-echo-server (server :max-concurrent-streams 2)
    (with-raw-peer (peer server)
      (raw-headers peer 1)
      (raw-headers peer 3)
      (raw-headers peer 5)
      (is (equal "REFUSED_STREAM" (raw-expect-rst peer 5)))
      ;; finishing one stream frees a slot
      (raw-data peer 1 (octets-of 1) :end-stream t)
      (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+ 1))
      (is (still-serving-p peer 7)))))

(test malformed-requests
  (flet ((try (headers)
           (with-echo-server (server)
             (with-raw-peer (peer server)
               (raw-headers peer 1 :headers headers :end-stream t)
               (prog1 (raw-expect-rst peer 1)
                 (is (still-serving-p peer 3)))))))
    (is (equal "PROTOCOL_ERROR" (try (append *h2-request-headers* '(("Upper" . "x"))))))
    (is (equal "PROTOCOL_ERROR" (try (remove ":path" *h2-request-headers* :key #'car :test #'string=))))
    (is (equal "PROTOCOL_ERROR" (try (cons '("x" . "1") *h2-request-headers*))))
    (is (equal "PROTOCOL_ERROR" (try (append *h2-request-headers* '(("connection" . "close"))))))
    (is (equal "PROTOCOL_ERROR" (try (append *h2-request-headers* '(("te" . "gzip"))))))
    (is (equal "PROTOCOL_ERROR" (try (append *h2-request-headers* '((":foo" . "bar"))))))
    (is (equal "PROTOCOL_ERROR" (try (append *h2-request-headers* '((":path" . "/again"))))))))

(test priority-self-dependency
  (with-echo-server (server)
    (with-raw-peer (peer server)
      (let ((block (raw-header-block peer)))
        (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-headers-frame
                                         b 1 block :priority-dependency 1 :end-stream t))))
      (is (equal "PROTOCOL_ERROR" (raw-expect-rst peer 1)))
      ;; the header block was still decoded: HPACK stays in step
      (is (still-serving-p peer 3)))))

(test unknown-frame-type-ignored
  (with-echo-server (server)
    (with-raw-peer (peer server)
      (raw-send peer (raw-frame-bytes 3 #xee 0 0))
      (is (still-serving-p peer 1)))))

(test frames-after-reset-ignored
  (with-echo-server (server)
    (with-raw-peer (peer server)
      (raw-headers peer 1)
      (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-rst-stream-frame b 1 8)))
      (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-window-update-frame b 1 100)))
      (is (still-serving-p peer 3)))))

(test random-garbage-never-hangs
  ;; Whatever follows a valid preface, the server answers with GOAWAY or
  ;; closes, within the timeout, and keeps accepting connections.
  (let ((state (sb-ext:seed-random-state 12345)))
    (with-echo-server (server)
      (dotimes (i 30)
        (with-raw-peer (peer server)
          (let ((junk (make-octets (+ 9 (random 200 state)))))
            (dotimes (j (length junk)) (setf (aref junk j) (random 256 state)))
            ;; a plausible length field makes frame-level errors likelier
            (setf (aref junk 0) 0 (aref junk 1) 0 (aref junk 2) (min 255 (- (length junk) 9)))
            (raw-send peer junk))
          (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-goaway-frame b 0 0)))
          (is (eq :eof (raw-expect-eof peer)))))
      (with-raw-peer (peer server)
        (is (still-serving-p peer 1))))))

;;; ------------------------------------------------------------------
;;; Our client connection against our server connection

(defstruct client-events
  (lock (sb-thread:make-mutex))
  (cv (sb-thread:make-waitqueue))
  (items '()))

(defun make-event-client (port &rest args)
  (let* ((events (make-client-events))
         (note (lambda (&rest item)
                 (push item (client-events-items events))
                 (sb-thread:condition-broadcast (client-events-cv events))))
         (conn (apply #'clgrpc.http2:make-connection
                      (clgrpc.net:tcp-connect "127.0.0.1" port) :client
                      :on-headers (lambda (c s headers end-stream)
                                    (declare (ignore c))
                                    (funcall note :headers (clgrpc.http2:h2-stream-id s)
                                             headers end-stream))
                      :on-data (lambda (c s octets start end end-stream)
                                 (clgrpc.http2:stream-return-window c s (- end start))
                                 (funcall note :data (clgrpc.http2:h2-stream-id s)
                                          (subseq octets start end) end-stream))
                      :on-reset (lambda (c s code origin)
                                  (declare (ignore c))
                                  (funcall note :reset (clgrpc.http2:h2-stream-id s) code origin))
                      args)))
    (setf (clgrpc.http2:connection-user conn) events)
    (clgrpc.http2:connection-start conn)))

(defun wait-event (conn predicate &optional (timeout *io-timeout*))
  "Wait (under the connection lock, where events are recorded) for an event
satisfying PREDICATE."
  (let ((events (clgrpc.http2:connection-user conn))
        (deadline (+ (clgrpc.util:now-us) (* timeout 1000000))))
    (clgrpc.http2:with-connection-lock (conn)
      (loop
        (let ((e (find-if predicate (reverse (client-events-items events)))))
          (when e (return e)))
        (unless (clgrpc.util:wait-on (client-events-cv events)
                                     (clgrpc.http2:connection-lock conn) deadline)
          (return :timeout))))))

(defun stream-body (conn id)
  "All DATA received on stream ID once it ended (or :TIMEOUT)."
  (let ((end (wait-event conn (lambda (e) (and (member (first e) '(:data :headers))
                                               (= (second e) id) (fourth e))))))
    (if (eq end :timeout)
        :timeout
        (let ((parts (loop for e in (reverse (client-events-items
                                              (clgrpc.http2:connection-user conn)))
                           when (and (eq (first e) :data) (= (second e) id))
                             collect (third e))))
          (apply #'concatenate 'octets parts)))))

(defun client-request (conn body &key (headers *h2-request-headers*))
  "Open a stream, send HEADERS and BODY with END_STREAM; returns the stream id."
  (let ((stream nil))
    (clgrpc.http2:with-connection-lock (conn)
      (setf stream (clgrpc.http2:open-stream conn :test))
      (clgrpc.http2:stream-write-headers conn stream headers))
    (clgrpc.http2:flush-connection conn)
    (clgrpc.http2:with-connection-lock (conn)
      (clgrpc.http2:stream-write-data conn stream body 0 (length body) :end-stream t))
    (clgrpc.http2:flush-connection conn)
    (clgrpc.http2:h2-stream-id stream)))

(test client-server-round-trip
  (with-echo-server (server)
    (let ((conn (make-event-client (echo-server-port server))))
      (unwind-protect
           (progn
             (is (= 1 (client-request conn (latin1-to-octets "one"))))
             (is (= 3 (client-request conn (latin1-to-octets "two"))))
             (is (string= "one" (octets-to-latin1 (stream-body conn 1))))
             (is (string= "two" (octets-to-latin1 (stream-body conn 3))))
             (is (numberp (clgrpc.http2:connection-ping conn))))
        (clgrpc.http2:connection-close conn)
        (is (clgrpc.http2:connection-wait-closed conn 5))))))

(test flow-control-blocks-and-resumes
  ;; 300 KB through 16 KB stream windows in both directions: the sender must
  ;; wait for WINDOW_UPDATEs, which come as the receiver consumes.
  (with-echo-server (server :initial-window-size 16384)
    (let ((conn (make-event-client (echo-server-port server) :initial-window-size 16384)))
      (unwind-protect
           (let* ((body (octets-range 300000))
                  (id (client-request conn body)))
             (is (equalp body (stream-body conn id))))
        (clgrpc.http2:connection-close conn)))))

(test many-concurrent-streams
  (with-echo-server (server)
    (let ((conn (make-event-client (echo-server-port server))))
      (unwind-protect
           (let* ((threads (loop for i below 8
                                 collect (let ((i i))
                                           (sb-thread:make-thread
                                            (lambda ()
                                              (loop for j below 20
                                                    collect (let ((msg (format nil "~D/~D" i j)))
                                                              (cons msg (client-request
                                                                         conn (latin1-to-octets msg))))))))))
                  (sent (mapcan #'sb-thread:join-thread threads)))
             (is (= 160 (length sent)))
             (is (every (lambda (pair) (equal (car pair)
                                              (let ((b (stream-body conn (cdr pair))))
                                                (and (not (symbolp b)) (octets-to-latin1 b)))))
                        sent)))
        (clgrpc.http2:connection-close conn)))))

(test client-respects-max-concurrent-streams
  (with-echo-server (server :max-concurrent-streams 1)
    (let ((conn (make-event-client (echo-server-port server))))
      (unwind-protect
           (progn
             ;; let the server's SETTINGS arrive
             (is (numberp (clgrpc.http2:connection-ping conn)))
             (is (= 1 (clgrpc.http2:connection-peer-max-concurrent-streams conn)))
             (let ((ids (loop for i below 5 collect (client-request conn (octets-of i)))))
               (is (every (lambda (id) (octets-p (stream-body conn id))) ids))
               (is (notany (lambda (e) (eq (first e) :reset))
                           (client-events-items (clgrpc.http2:connection-user conn))))))
        (clgrpc.http2:connection-close conn)))))

(defun octets-p (x) (typep x 'octets))

(test goaway-on-shutdown
  (with-echo-server (server)
    (let ((conn (make-event-client (echo-server-port server))))
      (unwind-protect
           (progn
             (is (= 1 (client-request conn (octets-of 1))))
             (is (octets-p (stream-body conn 1)))
             (let ((server-conn (first (echo-server-connections server))))
               (clgrpc.http2:connection-shutdown server-conn :timeout 2))
             (is (clgrpc.http2:connection-wait-closed conn 5))
             (is (clgrpc.http2:connection-goaway-received-p conn))
             ;; no new streams on a connection that got GOAWAY
             (clgrpc.http2:with-connection-lock (conn)
               (is (null (clgrpc.http2:open-stream conn :late)))))
        (clgrpc.http2:connection-close conn)))))

(test peer-reset-reaches-application
  (with-echo-server (server)
    (let ((conn (make-event-client (echo-server-port server))))
      (unwind-protect
           (let ((stream nil))
             (clgrpc.http2:with-connection-lock (conn)
               (setf stream (clgrpc.http2:open-stream conn :test))
               (clgrpc.http2:stream-write-headers conn stream *h2-request-headers*))
             (clgrpc.http2:flush-connection conn)
             (wait-event conn (lambda (e) (eq (first e) :headers)))
             ;; a stream window overflow makes the server reset the stream
             (clgrpc.http2:with-connection-lock (conn)
               (clgrpc.octets:obuf-reset (make-obuf 1))
               (clgrpc.http2:write-window-update-frame (clgrpc.http2::conn-out conn) 1 #x7fffffff))
             (clgrpc.http2:flush-connection conn)
             (let ((e (wait-event conn (lambda (e) (eq (first e) :reset)))))
               (is (equal (list :reset 1 clgrpc.http2:+flow-control-error+ :peer) e))))
        (clgrpc.http2:connection-close conn)))))

;;; ------------------------------------------------------------------
;;; Who writes a handler thread's output

(defun call-with-unstarted-connection (function)
  "FUNCTION with a server connection over a loopback socket that no reactor
serves, and a reactor of its own that no thread runs, to observe what is
posted to it."
  (let ((listener nil) (client nil) (socket nil) (reactor nil))
    (unwind-protect
         (progn
           (setf listener (clgrpc.net:tcp-listen "127.0.0.1" 0)
                 client (clgrpc.net:tcp-connect "127.0.0.1" (clgrpc.net:socket-local-port listener))
                 socket (clgrpc.net:tcp-accept listener)
                 ;; No epoll events array: nothing waits in this one.
                 reactor (clgrpc.http2::%make-reactor :wakefd (clgrpc.net:eventfd-create)
                                                      :events nil))
           (let ((conn (clgrpc.http2:make-connection socket :server)))
             (setf (clgrpc.http2::conn-reactor conn) reactor)
             (funcall function conn reactor)))
      (dolist (s (list socket client listener))
        (when s (clgrpc.net:socket-close s)))
      (when reactor
        (sb-unix:unix-close (clgrpc.http2::reactor-wakefd reactor))))))

(defun leave-flush (conn)
  (clgrpc.http2:with-connection-lock (conn)
    (clgrpc.http2::%leave-flush-to-reactor conn)))

(test a-handler-thread-leaves-its-output-to-a-reactor-in-its-turn
  ;; A reactor between two epoll waits runs what is posted before it waits
  ;; again: a handler thread's response goes out with the rest of that turn,
  ;; and the reactor is not woken for it.  A waiting reactor is not woken
  ;; either: the thread writes itself.
  (call-with-unstarted-connection
   (lambda (conn reactor)
     (is (null (leave-flush conn)) "left to a reactor that waits")
     (is (null (clgrpc.http2::reactor-posted reactor)))
     (setf (clgrpc.http2::reactor-in-turn reactor) t)
     (is (eq t (leave-flush conn)))
     (is (equal (list conn) (clgrpc.http2::reactor-posted reactor)))
     (is (= clgrpc.http2::+post-flush+ (clgrpc.http2::conn-posted conn)))
     (is (null (clgrpc.http2::reactor-wake-pending reactor)) "the reactor was woken"))))

(test output-past-a-little-is-written-by-the-thread-that-appended-it
  ;; Much output left for a round would count against the connection's
  ;; high-water mark: the thread writes it itself, even in a turn.
  (call-with-unstarted-connection
   (lambda (conn reactor)
     (setf (clgrpc.http2::reactor-in-turn reactor) t)
     (clgrpc.http2:with-connection-lock (conn)
       (clgrpc.octets:obuf-write-bytes (clgrpc.http2::conn-out conn)
                                     (make-array (* 65 1024) :element-type '(unsigned-byte 8)
                                                             :initial-element 0)))
     (is (null (leave-flush conn)))
     (is (null (clgrpc.http2::reactor-posted reactor))))))

(test output-of-a-posted-connection-goes-with-its-posted-work
  ;; Posted already, in a turn: the flush joins that work, without a second
  ;; entry.  Posted but waiting (woken, not yet running), it is not left:
  ;; the thread writes now rather than after the reactor's wake-up.
  (call-with-unstarted-connection
   (lambda (conn reactor)
     (clgrpc.http2:with-connection-lock (conn)
       (clgrpc.http2::%post conn clgrpc.http2::+post-register+))
     (is (null (leave-flush conn)))
     (setf (clgrpc.http2::reactor-in-turn reactor) t)
     (is (eq t (leave-flush conn)))
     (is (equal (list conn) (clgrpc.http2::reactor-posted reactor)))
     (is (= (logior clgrpc.http2::+post-register+ clgrpc.http2::+post-flush+)
            (clgrpc.http2::conn-posted conn))))))
