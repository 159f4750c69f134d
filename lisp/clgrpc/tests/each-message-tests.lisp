;;;; Bidi handlers called per message (REGISTER-METHOD's :EACH-MESSAGE):
;;;; order, the end of the client's messages, errors, cancellation giving
;;;; the handler slot back, and many streams served without a thread each.

(in-package #:clgrpc.tests)

(def-suite :clgrpc.each-message :in :clgrpc)
(in-suite :clgrpc.each-message)

(defvar *each-gate* (sb-thread:make-semaphore) "What Block handlers wait for.")
(defvar *noted* '() "What Note handlers noted, newest first.")
(defvar *noted-lock* (sb-thread:make-mutex :name "noted"))

(defun register-each-message-methods (server)
  (flet ((reg (name fn)
           (clgrpc.grpc:register-method server (concatenate 'string "/t.T/" name) fn
                                        :kind :bidi :each-message t)))
    (reg "Echo"                         ; each message back; at the end, a last one of 0
         (lambda (message call)
           (clgrpc.grpc:call-send call (or message (bytes 0)))))
    (reg "FailOnThree"                  ; as Echo, but a message (3) fails the call
         (lambda (message call)
           (when (and message (= 3 (aref message 0)))
             (error 'clgrpc.grpc:grpc-error :code clgrpc.grpc:+failed-precondition+
                                            :message "three"))
           (when message
             (clgrpc.grpc:call-send call message))))
    (reg "Interrupt"                    ; signals a condition that is not an error
         (lambda (message call)
           (declare (ignore call))
           (when message
             (error 'test-interrupt))))
    (reg "Block"                        ; waits for *EACH-GATE*, then as Echo
         (lambda (message call)
           (when message
             (sb-thread:wait-on-semaphore *each-gate* :timeout 20)
             (clgrpc.grpc:call-send call message))))
    (reg "Note"                         ; notes the first octet of each message, in order
         (lambda (message call)
           (declare (ignore call))
           (when message
             (sb-thread:with-mutex (*noted-lock*)
               (push (aref message 0) *noted*)))))
    (reg "SlowEcho"                     ; waits 3 s, then the message's first octet back
         (lambda (message call)
           (when message
             (sleep 3)
             (clgrpc.grpc:call-send call (bytes (aref message 0))))))
    (reg "Recv"                         ; calls CALL-RECV, which it must not
         (lambda (message call)
           (when message
             (clgrpc.grpc:call-recv call)))))
  (flet ((reg (name fn)
           (clgrpc.grpc:register-method server (concatenate 'string "/t.T/" name) fn
                                        :kind :client-streaming :each-message t)))
    (reg "Sum"                          ; the sum of every octet, as three octets
         (lambda (message call)
           (if message
               (setf (clgrpc.grpc:call-state call)
                     (+ (or (clgrpc.grpc:call-state call) 0) (reduce #'+ message)))
               (let ((sum (or (clgrpc.grpc:call-state call) 0)))
                 (bytes (ldb (byte 8 0) sum) (ldb (byte 8 8) sum) (ldb (byte 8 16) sum))))))
    (reg "NoAnswer"                     ; returns no response at the end
         (lambda (message call)
           (declare (ignore message call))
           nil))))

(defmacro with-each-message-server ((port &rest server-args) &body body)
  (let ((server (gensym "SERVER")))
    `(let* ((,server (clgrpc.grpc:make-server ,@server-args))
            (,port (progn (register-each-message-methods ,server)
                          (clgrpc.grpc:server-start ,server))))
       (unwind-protect (progn ,@body)
         (clgrpc.grpc:server-stop ,server :grace 1)))))

(test each-message-handlers-answer-in-order-and-see-the-end
  (with-each-message-server (port)
    (let ((ch (clgrpc.grpc:make-channel "127.0.0.1" port)))
      (unwind-protect
           (let ((call (clgrpc.grpc:bidi-streaming-call ch "/t.T/Echo" :timeout 10)))
             (loop for i from 1 to 50 do (clgrpc.grpc:call-send call (bytes i)))
             (clgrpc.grpc:call-close-send call)
             (is (equalp (append (loop for i from 1 to 50 collect (bytes i)) (list (bytes 0)))
                         (loop for m = (clgrpc.grpc:call-recv call) while m collect m)))
             (is (eql clgrpc.grpc:+ok+ (clgrpc.grpc:call-status-code call))))
        (clgrpc.grpc:channel-close ch)))))

(test an-each-message-handler-that-signals-ends-its-call
  (with-each-message-server (port)
    (let ((ch (clgrpc.grpc:make-channel "127.0.0.1" port)))
      (unwind-protect
           (let ((call (clgrpc.grpc:bidi-streaming-call ch "/t.T/FailOnThree" :timeout 10))
                 (got '()))
             (dolist (i '(1 2 3 4))
               ;; The handler may have failed the call on the third before
               ;; the fourth is sent: the status is the receiver's to read.
               (handler-case (clgrpc.grpc:call-send call (bytes i))
                 (clgrpc.grpc:grpc-error () (return))))
             (handler-case (loop for m = (clgrpc.grpc:call-recv call) while m do (push m got))
               (clgrpc.grpc:grpc-error (e)
                 (is (eql clgrpc.grpc:+failed-precondition+ (clgrpc.grpc:grpc-error-code e)))
                 (is (equal "three" (clgrpc.grpc:grpc-error-message e)))))
             (is (equalp (list (bytes 1) (bytes 2)) (reverse got))))
        (clgrpc.grpc:channel-close ch)))))

(test cancelled-each-message-calls-give-their-slots-back
  ;; Two calls cancelled by the peer, one before any message and one after
  ;; a message: a connection allowed two streams can open two more.
  (with-each-message-server (port :max-concurrent-streams 2 :max-early-resets-per-second 100)
    (let ((peer (raw-connect-port port)))
      (unwind-protect
           (progn
             (raw-headers peer 1 :headers (grpc-request-headers "/t.T/Echo"))
             (raw-grpc-request peer 3 "/t.T/Echo" (bytes 3) :end-stream nil)
             (is (not (symbolp (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+ 3)))))
             (dolist (id '(1 3))
               (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-rst-stream-frame
                                                b id clgrpc.http2:+cancel+))))
             (sleep 0.3)
             (dolist (id '(5 7))
               (raw-grpc-request peer id "/t.T/Echo" (bytes id) :end-stream nil))
             (dolist (id '(5 7))
               (let ((f (raw-expect peer (lambda (f)
                                           (and (= id (clgrpc.http2:frame-stream-id f))
                                                (member (clgrpc.http2:frame-type f)
                                                        (list clgrpc.http2:+frame-data+
                                                              clgrpc.http2:+frame-rst-stream+))))
                                    5)))
                 (is (and (not (symbolp f)) (= clgrpc.http2:+frame-data+ (clgrpc.http2:frame-type f)))
                     "stream ~D was not answered" id))))
        (raw-close peer)))))

(defun handler-thread-count ()
  (count "grpc handler" (sb-thread:list-all-threads) :key #'sb-thread:thread-name :test #'equal))

(test many-each-message-streams-need-no-thread-each
  ;; 200 streams on one connection, each with a message outstanding: all
  ;; are answered, and the executor does not grow a thread per stream.
  (with-each-message-server (port)
    (let ((peer (raw-connect-port port))
          (b (make-obuf 65536)))
      (unwind-protect
           (let ((ids (loop for id from 1 by 2 repeat 200 collect id)))
             (dolist (id ids)
               (clgrpc.http2:write-headers-frame
                b id (raw-header-block peer (grpc-request-headers "/t.T/Echo")))
               (clgrpc.http2:write-data-frame b id (grpc-frame (bytes 1))))
             (raw-send peer (obuf-contents b))
             (is (= 200 (loop repeat 200
                              count (not (symbolp (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+)
                                                              15))))))
             (is (< (handler-thread-count) 64) "~D handler threads" (handler-thread-count)))
        (raw-close peer)))))

(defun first-message-error (channel path)
  "The GRPC-ERROR that ends a call to PATH once it has sent one message
(an empty condition with code NIL if the call answers instead)."
  (let ((call (clgrpc.grpc:bidi-streaming-call channel path :timeout 10)))
    (clgrpc.grpc:call-send call (bytes 1))
    (handler-case (progn (clgrpc.grpc:call-recv call)
                         (make-condition 'clgrpc.grpc:grpc-error :code nil :message ""))
      (clgrpc.grpc:grpc-error (e) e))))

(test a-drain-left-by-a-non-error-fails-its-call-and-frees-its-slot
  ;; The handler unwinds with a serious condition that is not an error (as
  ;; a timeout or an interrupt would): the call fails INTERNAL, and the
  ;; connection's one stream slot is free for the next call.
  (with-each-message-server (port :max-concurrent-streams 1)
    (let ((ch (clgrpc.grpc:make-channel "127.0.0.1" port)))
      (unwind-protect
           (progn
             (is (eql clgrpc.grpc:+internal+
                      (clgrpc.grpc:grpc-error-code (first-message-error ch "/t.T/Interrupt"))))
             (let ((next (clgrpc.grpc:bidi-streaming-call ch "/t.T/Echo" :timeout 5)))
               (clgrpc.grpc:call-send next (bytes 2))
               (is (equalp (bytes 2) (clgrpc.grpc:call-recv next)))
               (clgrpc.grpc:call-cancel next)))
        (clgrpc.grpc:channel-close ch)))))

(test call-recv-on-an-each-message-call-fails-it
  (with-each-message-server (port)
    (let ((ch (clgrpc.grpc:make-channel "127.0.0.1" port)))
      (unwind-protect
           (let ((e (first-message-error ch "/t.T/Recv")))
             (is (eql clgrpc.grpc:+unknown+ (clgrpc.grpc:grpc-error-code e)))
             (is (search "per message" (clgrpc.grpc:grpc-error-message e))))
        (clgrpc.grpc:channel-close ch)))))

(test blocked-drains-of-one-connection-leave-the-executor-to-others
  ;; Four handler threads at most, one streaming turn a connection once
  ;; half are busy: six calls of one connection whose handlers block take
  ;; two workers and queue the rest on their connection, so another
  ;; connection's call is answered meanwhile.
  (with-each-message-server (port :max-handler-threads 4 :max-streaming-handlers-per-connection 1)
    (let ((hog (clgrpc.grpc:make-channel "127.0.0.1" port))
          (other (clgrpc.grpc:make-channel "127.0.0.1" port))
          (blocked '()))
      (unwind-protect
           (progn
             (dotimes (i 6)
               (let ((call (clgrpc.grpc:bidi-streaming-call hog "/t.T/Block" :timeout 30)))
                 (clgrpc.grpc:call-send call (bytes i))
                 (push call blocked)))
             (sleep 0.3)
             (let ((call (clgrpc.grpc:bidi-streaming-call other "/t.T/Echo" :timeout 5)))
               (clgrpc.grpc:call-send call (bytes 9))
               (is (equalp (bytes 9) (handler-case (clgrpc.grpc:call-recv call)
                                       (clgrpc.grpc:grpc-error (e) e))))
               (clgrpc.grpc:call-cancel call))
             (sb-thread:signal-semaphore *each-gate* 6)
             (is (= 6 (count-if (lambda (call)
                                  (equalp (bytes (position call (reverse blocked)))
                                          (handler-case (clgrpc.grpc:call-recv call)
                                            (clgrpc.grpc:grpc-error () nil))))
                                blocked))))
        (clgrpc.grpc:channel-close hog)
        (clgrpc.grpc:channel-close other)))))

(test a-busy-stream-shares-the-worker-with-others
  ;; One handler thread; forty messages for each of two streams, in one
  ;; write: the first stream's drain takes a batch and queues itself again,
  ;; so the second stream's messages run before the first's are all done.
  (setf *noted* '())
  (with-each-message-server (port :max-handler-threads 1)
    (let ((peer (raw-connect-port port))
          (b (make-obuf 8192)))
      (unwind-protect
           (progn
             (dolist (id '(1 3))
               (clgrpc.http2:write-headers-frame
                b id (raw-header-block peer (grpc-request-headers "/t.T/Note"))))
             (dolist (id '(1 3))
               (dotimes (i 40)
                 (clgrpc.http2:write-data-frame b id (grpc-frame (bytes id i)))))
             (raw-send peer (obuf-contents b))
             (is (loop repeat 500
                       thereis (= 80 (length *noted*))
                       do (sleep 0.01))
                 "~D of 80 messages handled" (length *noted*))
             (let ((order (reverse *noted*)))
               (is (< (position 3 order) 40)
                   "the second stream waited for all ~D of the first's messages"
                   (position 3 order))))
        (raw-close peer)))))

(defun send-data-in-frames (peer id octets start end &key end-stream)
  "OCTETS[START,END) on stream ID in DATA frames of at most 16,384 octets."
  (loop for from from start below end by 16384
        for to = (min end (+ from 16384))
        do (raw-data peer id (subseq octets from to) :end-stream (and end-stream (= to end)))))

(test a-slow-handler-does-not-stall-the-message-behind-it
  ;; Receive-stall timeout 2 s; a handler that takes 3 s a message.  The
  ;; client sends two small messages and half of a large one, and the rest
  ;; of it 4.5 s later.  The large message waited on the server (its
  ;; handler was busy until 3 s), not on the client: the call must not fail
  ;; as a stalled message (the check at 4 s), and all three are answered.
  (with-each-message-server (port :receive-stall-timeout 2)
    (let* ((peer (raw-connect-port port))
           (large (grpc-frame (make-array 100000 :element-type '(unsigned-byte 8)
                                                 :initial-element 7)))
           (half 50000))
      (unwind-protect
           (progn
             (raw-headers peer 1 :headers (grpc-request-headers "/t.T/SlowEcho"))
             (raw-data peer 1 (grpc-frame (bytes 1)))
             (raw-data peer 1 (grpc-frame (bytes 2)))
             (send-data-in-frames peer 1 large 0 half)
             (sleep 4.5)
             (send-data-in-frames peer 1 large half (length large) :end-stream t)
             (let ((answers '()) (end nil))
               (loop until end
                     do (let ((f (raw-expect peer (lambda (f)
                                                    (and (= 1 (clgrpc.http2:frame-stream-id f))
                                                         (member (clgrpc.http2:frame-type f)
                                                                 (list clgrpc.http2:+frame-data+
                                                                       clgrpc.http2:+frame-headers+
                                                                       clgrpc.http2:+frame-rst-stream+))))
                                             15)))
                          (cond ((symbolp f) (setf end f))
                                ((= (clgrpc.http2:frame-type f) clgrpc.http2:+frame-data+)
                                 (push (aref (data-frames-payload f) 0) answers))
                                ((= (clgrpc.http2:frame-type f) clgrpc.http2:+frame-rst-stream+)
                                 (setf end :reset))
                                (t (let ((headers (raw-decode-headers peer f)))
                                     (when (assoc "grpc-status" headers :test #'string=)
                                       (setf end (cdr (assoc "grpc-status" headers
                                                             :test #'string=)))))))))
               (is (equal '(1 2 7) (reverse answers)))
               (is (equal "0" end) "the call ended with ~S" end)))
        (raw-close peer)))))

(test each-message-client-streaming-answers-once-at-the-end
  ;; A client-streaming handler called per message gathers in CALL-STATE
  ;; and answers with what its call at the end returns; returning nothing
  ;; fails the call INTERNAL, as a thread-per-call handler's does.
  (with-each-message-server (port)
    (let ((ch (clgrpc.grpc:make-channel "127.0.0.1" port)))
      (unwind-protect
           (progn
             (let ((call (clgrpc.grpc:client-streaming-call ch "/t.T/Sum" :timeout 10)))
               (loop for i from 0 below 100 do (clgrpc.grpc:call-send call (bytes i 1)))
               (is (equalp (bytes (ldb (byte 8 0) 5050) (ldb (byte 8 8) 5050) 0)
                           (clgrpc.grpc:call-close-and-recv call)))
               (is (eql clgrpc.grpc:+ok+ (clgrpc.grpc:call-status-code call))))
             (let ((call (clgrpc.grpc:client-streaming-call ch "/t.T/Sum" :timeout 10)))
               (is (equalp (bytes 0 0 0) (clgrpc.grpc:call-close-and-recv call))))
             (let ((call (clgrpc.grpc:client-streaming-call ch "/t.T/NoAnswer" :timeout 10)))
               (clgrpc.grpc:call-send call (bytes 1))
               (handler-case (progn (clgrpc.grpc:call-close-and-recv call)
                                    (is nil "NoAnswer answered"))
                 (clgrpc.grpc:grpc-error (e)
                   (is (eql clgrpc.grpc:+internal+ (clgrpc.grpc:grpc-error-code e)))))))
        (clgrpc.grpc:channel-close ch)))))

(test many-each-message-client-streams-need-no-thread-each
  ;; 200 client-streaming calls on one connection, each with a message sent
  ;; and the stream left open: no thread waits for any of them, and each is
  ;; answered once it ends.
  (with-each-message-server (port)
    (let ((peer (raw-connect-port port))
          (ids (loop for id from 1 by 2 repeat 200 collect id)))
      (unwind-protect
           (let ((b (make-obuf 65536)))
             (dolist (id ids)
               (clgrpc.http2:write-headers-frame
                b id (raw-header-block peer (grpc-request-headers "/t.T/Sum")))
               (clgrpc.http2:write-data-frame b id (grpc-frame (bytes 2))))
             (raw-send peer (obuf-contents b))
             (sleep 0.5)
             (is (< (handler-thread-count) 64) "~D handler threads" (handler-thread-count))
             (let ((b (make-obuf 4096)))
               (dolist (id ids)
                 (clgrpc.http2:write-data-frame b id (make-octets 0) :end-stream t))
               (raw-send peer (obuf-contents b)))
             (is (equal (make-list 200 :initial-element "0") (stream-outcomes peer ids 15))))
        (raw-close peer)))))

(test each-message-is-for-streamed-requests-and-not-inline
  (let ((server (clgrpc.grpc:make-server)))
    (signals error (clgrpc.grpc:register-method server "/t.T/U" (lambda (m c) (declare (ignore c)) m)
                                                 :kind :unary :each-message t))
    (signals error (clgrpc.grpc:register-method server "/t.T/C" (lambda (m c) (declare (ignore m c)))
                                                 :kind :client-streaming :each-message t
                                                 :inline t))
    ;; :inline means nothing for bidi methods, as before.
    (is (clgrpc.grpc:register-method server "/t.T/B" (lambda (m c) (declare (ignore m c)))
                                     :kind :bidi :each-message t :inline t))))
