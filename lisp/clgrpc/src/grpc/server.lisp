;;;; The gRPC server: method registry, request validation, dispatch to
;;;; worker pools, responses and trailers, deadlines.
;;;;
;;;; Per connection, the HTTP/2 reactor parses requests and runs the
;;;; callbacks below (lock held).  Handlers never run there under the lock:
;;;; unary calls (and server-streaming ones, which also start from one
;;;; request) are submitted once their request is complete; client-streaming
;;;; and bidi calls start at once and receive messages as they come.  A unary
;;;; response -- HEADERS, DATA and trailers -- is appended in one lock hold
;;;; and written by the worker itself with one send(2), or batched with other
;;;; responses when another thread is already writing.  A server made with
;;;; UNARY-INLINE runs unary handlers on the reactor instead, after it has
;;;; released the lock, and the reactor writes their responses without
;;;; blocking (http2/output.lisp).
;;;;
;;;; What a peer can make the server do is bounded: each call holds a
;;;; handler slot of its connection from its HEADERS until its handler is
;;;; over (or, never started, until the call ends), so streams the peer
;;;; resets cannot pile up work; a call reset before its handler starts never
;;;; runs; a unary response the peer's window or a full output cannot take
;;;; is parked, never waited for on a pool thread; one connection runs at
;;;; most its share of streaming handlers; and past MAX-CONNECTIONS new
;;;; connections are closed at once.  Requests are decoded on the worker
;;;; that runs their handler, never on the reactor.

(in-package #:clgrpc.grpc)

(defstruct (method-entry (:constructor make-method-entry (path kind handler encoder decoder)))
  (path "" :type string)
  (kind :unary :type method-kind)
  (handler nil :type function)
  (encoder nil :type function)
  (decoder nil :type function)
  ;; Until this time (now-us), unary calls of the method run on the pool:
  ;; one of its handlers outran its reactor's slice (%NOTE-MOVED).
  (pool-until 0 :type fixnum))

(defstruct (server (:constructor %make-server))
  (methods (make-hash-table :test 'equal) :type hash-table)
  (services (make-hash-table :test 'equal) :type hash-table)
  ;; service name -> ((file name . serialized FileDescriptorProto) ...), its
  ;; file and that file's imports, for server reflection
  (descriptors (make-hash-table :test 'equal) :type hash-table)
  (lock (sb-thread:make-mutex :name "grpc server") :type sb-thread:mutex)
  (listener nil)
  (port nil)
  (accept-thread nil)
  (connections (make-hash-table :test 'eq) :type hash-table)
  (max-connections nil :type (or null fixnum))
  (refused-connections 0 :type fixnum)  ; closed at once: MAX-CONNECTIONS reached
  (unary-pool nil)
  (stream-pool nil)
  ;; Where unary handlers run: :ADAPTIVE, :INLINE or :POOL (MAKE-SERVER).
  (unary-handlers :adaptive :type (member :adaptive :inline :pool))
  ;; Streaming handlers one connection may have on the stream pool at once;
  ;; its further calls wait for its own to finish (ADMIT-STREAMING).
  (max-streaming-handlers-per-connection 100 :type fixnum)
  (max-receive-message-size 4194304 :type fixnum)
  (max-send-message-size most-positive-fixnum :type fixnum)
  (connection-options '() :type list)
  ;; A clgrpc.tls server context: every connection speaks TLS.
  (tls nil :type (or null clgrpc.tls:tls-context))
  (state :new :type (member :new :running :stopping :stopped)))

(defun scratch-wrapper (thunk)
  (let ((*scratch* (make-obuf 4096)))
    (funcall thunk)))

;;; Reactors run unary handlers inline: they get a scratch buffer too.
(setf clgrpc.http2:*reactor-thread-wrapper* #'scratch-wrapper)

(defun seconds-to-us (seconds)
  (and seconds (round (* seconds 1000000))))

(defun make-server (&key (max-receive-message-size 4194304)
                         (max-send-message-size most-positive-fixnum)
                         (unary-threads 16) (stream-threads 4096)
                         (max-concurrent-streams 1000)
                         (initial-window-size 1048576)
                         (connection-window-size 4194304)
                         (max-header-list-size 65536)
                         (unary-handlers :adaptive)
                         (max-streaming-handlers-per-connection 100)
                         max-connections
                         (handshake-timeout 120)
                         (keepalive-time 7200) (keepalive-timeout 20)
                         max-connection-idle max-connection-age max-connection-age-grace
                         (keepalive-min-time 300) keepalive-permit-without-stream
                         (max-queued-control-frames 1000)
                         (max-early-resets-per-second 1000)
                         tls)
  "A server with no methods yet.  TLS, a server context of
clgrpc.tls:make-server-context, makes it serve HTTP/2 over TLS only (ALPN
h2); a handler finds the client's verified identity with CALL-PEER-TLS.  UNARY-THREADS bounds the pool that runs
unary handlers; STREAM-THREADS the pool for
server-streaming, client-streaming and bidi handlers, which wait for the
peer and so need a thread each while they run.  A connection runs at most
MAX-STREAMING-HANDLERS-PER-CONNECTION of those at once; its further calls
wait, in order, for its own to finish, so no peer can take the whole pool
from the others.

UNARY-HANDLERS says where unary handlers run.  :ADAPTIVE, the default,
runs each on the reactor thread that read its request: no hand-off to a
worker, and the responses to the requests of one read(2) leave in one
send(2).  A handler that runs longer than a slice of about 3 ms (or blocks)
keeps its thread, and the reactor's loop moves to a new thread
(http2/handover.lisp), so the other connections wait no longer than that;
the method's calls then run on the pool for a second, and on the pool too
while many threads are still finishing such handlers.  :INLINE keeps every
unary handler on the reactor (moved off only as above), and :POOL runs
every one on the pool of UNARY-THREADS.

Limits, in seconds where they are times (NIL: none), with grpc-go's
defaults: MAX-CONNECTIONS (beyond it new connections are closed at once),
HANDSHAKE-TIMEOUT for the client preface and SETTINGS, keepalive
(KEEPALIVE-TIME, KEEPALIVE-TIMEOUT, MAX-CONNECTION-IDLE, MAX-CONNECTION-AGE,
MAX-CONNECTION-AGE-GRACE) and its enforcement (KEEPALIVE-MIN-TIME,
KEEPALIVE-PERMIT-WITHOUT-STREAM), MAX-QUEUED-CONTROL-FRAMES for a peer that
does not read, and MAX-EARLY-RESETS-PER-SECOND against Rapid Reset."
  (when tls
    (check-type tls clgrpc.tls:tls-context)
    (unless (eq (clgrpc.tls:tls-context-role tls) :server)
      (error "make-server: TLS needs a server context")))
  (%make-server
   :tls tls
   :unary-handlers unary-handlers
   :max-streaming-handlers-per-connection max-streaming-handlers-per-connection
   :max-connections max-connections
   :max-receive-message-size max-receive-message-size
   :max-send-message-size max-send-message-size
   :unary-pool (make-worker-pool :name "grpc unary" :max-threads unary-threads
                                 :wrapper #'scratch-wrapper)
   ;; Streaming calls can number thousands at once; once a burst is over,
   ;; keep only a few idle threads (see worker-pool.lisp on why).
   :stream-pool (make-worker-pool :name "grpc stream" :max-threads stream-threads
                                  :keep-idle unary-threads
                                  :wrapper #'scratch-wrapper)
   :connection-options (list :max-concurrent-streams max-concurrent-streams
                             :initial-window-size initial-window-size
                             :connection-window-size connection-window-size
                             :max-header-list-size max-header-list-size
                             :limits (clgrpc.http2:make-connection-limits
                                      :handshake-timeout (seconds-to-us handshake-timeout)
                                      :keepalive-time (seconds-to-us keepalive-time)
                                      :keepalive-timeout (seconds-to-us keepalive-timeout)
                                      :max-idle (seconds-to-us max-connection-idle)
                                      :max-age (seconds-to-us max-connection-age)
                                      :max-age-grace (seconds-to-us max-connection-age-grace)
                                      :min-ping-interval (seconds-to-us keepalive-min-time)
                                      :permit-without-stream keepalive-permit-without-stream
                                      :max-queued-control-frames max-queued-control-frames
                                      :max-early-resets-per-second
                                      max-early-resets-per-second))))

(defun register-method (server path handler &key (kind :unary)
                                                 (request-decoder #'raw-decoder)
                                                 (response-encoder #'raw-encoder))
  "Serve PATH (\"/package.Service/Method\") with HANDLER:
  :UNARY             (handler request call) => response
  :SERVER-STREAMING  (handler request call), sending with CALL-SEND
  :CLIENT-STREAMING  (handler call) => response, receiving with CALL-RECV
  :BIDI              (handler call), with CALL-RECV and CALL-SEND
Signalling GRPC-ERROR ends the call with its status; any other error ends
it with UNKNOWN."
  (check-type kind method-kind)
  (let ((slash (position #\/ path :start 1)))
    (unless (and (> (length path) 1) (char= (char path 0) #\/) slash)
      (error "method path ~S is not /service/method" path))
    (setf (gethash (subseq path 1 slash) (server-services server)) t))
  (setf (gethash path (server-methods server))
        (make-method-entry path kind handler response-encoder request-decoder))
  path)

(defun register-service-descriptors (server service files)
  "Record FILES, ((name . serialized FileDescriptorProto) ...), as the proto
file that defines SERVICE and the files it imports: what server reflection
answers about SERVICE.  Generated registration functions call it."
  (setf (gethash service (server-descriptors server)) files)
  service)

(defun server-service-names (server)
  "The names of the services SERVER serves, sorted."
  (sort (loop for name being the hash-keys of (server-services server) collect name) #'string<))

(defun server-file-descriptors (server)
  "Every proto file registered with SERVER's services, as (name . serialized
FileDescriptorProto), each once."
  (let ((files '()))
    (loop for service-files being the hash-values of (server-descriptors server)
          do (dolist (f service-files)
               (pushnew f files :key #'car :test #'string=)))
    (nreverse files)))

;;; ------------------------------------------------------------------
;;; Writing responses (connection lock held)

(defparameter +response-headers+
  '((":status" . "200") ("content-type" . "application/grpc")))

(defun %send-response-headers (call)
  "Lock held: the response HEADERS, once.  Returns true if they are out; if
the application's metadata cannot be sent, the call ends with INTERNAL
(trailers-only) and this returns NIL."
  (if (call-headers-sent call)
      t
      ;; grpc-encoding must survive the trim below: compressed messages without it are unreadable.
      (let* ((required (if (call-send-gzip call)
                           (append +response-headers+ '(("grpc-encoding" . "gzip")))
                           +response-headers+))
             (metadata (call-%response-metadata call))
             (headers (if metadata
                          (handler-case (append required (metadata-to-headers metadata))
                            (grpc-error (e)
                              (%send-trailers call +internal+ (grpc-error-message e) nil)
                              (return-from %send-response-headers nil)))
                          required)))
        (unless (clgrpc.http2::%header-list-fits-p (call-conn call) headers)
          ;; The client said it takes no more (SETTINGS_MAX_HEADER_LIST_SIZE): custom metadata goes.
          (setf headers required))
        (setf (call-headers-sent call) t)
        (clgrpc.http2::%write-headers (call-conn call) (call-stream call) headers)
        t)))

(defun trailer-headers (code message metadata)
  (let ((tail (when metadata (metadata-to-headers metadata))))
    (when (plusp (length message))
      ;; Not indexed: messages vary and would churn the HPACK table.
      (push (list "grpc-message" (percent-encode-message message) :without) tail))
    (cons (cons "grpc-status" (svref *status-strings* code)) tail)))

(defun %send-trailers (call code message metadata &key (reset-code clgrpc.http2:+no-error+))
  "End the call with status CODE: trailers (a trailers-only response if no
headers went out yet), then RST_STREAM if the client is still sending, so
it stops (RFC 9113 8.1)."
  (let ((conn (call-conn call))
        (stream (call-stream call)))
    (setf (call-status call) code
          (call-status-message call) message)
    (when (call-timer call)
      (cancel-timer (call-timer call)))
    (when (and (clgrpc.http2::stream-can-send-p stream)
               (clgrpc.http2::stream-mid-message-p stream))
      ;; Part of a message is out (a deadline or a failure came while the
      ;; rest waited): trailers now would cut it short on the wire, so the
      ;; stream is reset instead, as grpc-go's server does on its deadline.
      (clgrpc.http2::%reset-stream conn stream clgrpc.http2:+cancel+))
    (when (clgrpc.http2::stream-can-send-p stream)
      (let ((trailers (handler-case (trailer-headers code message metadata)
                        (grpc-error (e)
                          (trailer-headers +internal+ (grpc-error-message e) nil)))))
        (unless (clgrpc.http2::%header-list-fits-p conn trailers)
          (setf trailers (trailer-headers +internal+ "response trailers exceed the client's header list limit" nil)))
        (clgrpc.http2::%write-headers conn stream
                                     (if (call-headers-sent call)
                                         trailers
                                         (append +response-headers+ trailers))
                                     :end-stream t))
      (setf (call-headers-sent call) t))
    (when (clgrpc.http2::stream-can-receive-p stream)
      (clgrpc.http2::%reset-stream conn stream reset-code))
    (%release-undispatched call)
    (broadcast-if-waiting (call-waiters call) (call-cv call))))

(defun %trailers-only (conn stream http-status code message &optional extra)
  "Refuse a request before any call exists."
  (clgrpc.http2::%write-headers
   conn stream
   (list* (cons ":status" http-status) '("content-type" . "application/grpc")
          (cons "grpc-status" (svref *status-strings* code))
          (list "grpc-message" (percent-encode-message message) :without)
          extra)
   :end-stream t)
  (when (clgrpc.http2::stream-can-receive-p stream)
    (clgrpc.http2::%reset-stream conn stream clgrpc.http2:+no-error+))
  (clgrpc.http2::%request-flush conn))

(defun %server-fail (call code message)
  (unless (call-status call)
    (%send-trailers call code message nil)
    (clgrpc.http2::%request-flush (call-conn call))))

(defun %release-slot (call)
  "Lock held: give CALL's handler slot back to its connection, once."
  (unless (call-slot-released call)
    (setf (call-slot-released call) t)
    (decf (clgrpc.http2::conn-handlers (call-conn call)))))

(declaim (ftype function %finish-streaming-handler))

(defun %give-back-turn (call)
  "Lock held: CALL's handler is done, or will never run: its handler slot
and its streaming turn go back to its connection, each once."
  (%release-slot call)
  (%finish-streaming-handler call))

(defun %release-undispatched (call)
  "Lock held: CALL ended before its handler ran; it gives its handler slot
back (and leaves its connection's queue) now, as no handler will."
  (case (call-dispatched call)
    ((nil) (%release-slot call))
    (:queued (%release-slot call)
     (%forget-queued call))))

(defun %trailers-after-park (call code message metadata)
  "What to do once a parked response has been written: the trailers."
  (lambda (conn stream)
    (declare (ignore stream))
    (unless (call-status call)
      (%send-trailers call code message metadata))
    (clgrpc.http2::%request-flush conn)))

(defun server-finish (call code message response metadata)
  "A handler returned (or failed): send RESPONSE, if any, and the trailers,
then write them out from this thread.  What the peer's window or a full
output cannot take now is parked and finished by whoever drains the
output: a pool thread never waits on a peer here."
  (let ((buf nil)
        (conn (call-conn call)))
    (when (and (eq (call-dispatched call) :inline) (not (clgrpc.http2:reader-thread-p conn)))
      ;; Run on a reactor that moved on meanwhile: marked before the response
      ;; is appended, so that the client's next call already finds the mark.
      (%note-moved call))
    (when response
      (handler-case (setf buf (encode-message-frame call response))
        (grpc-error (e) (setf code (grpc-error-code e) message (grpc-error-message e)))
        (error (e) (setf code +internal+
                         message (format nil "failed to encode response: ~A" e)))))
    (clgrpc.http2:with-connection-lock (conn)
      (unless (call-status call)
        (let ((stream (call-stream call)))
          (cond ((not (and buf (%send-response-headers call)))
                 (unless (call-status call)
                   (%send-trailers call code message metadata)))
                ((= (obuf-fill buf) (clgrpc.http2::%parkable-window conn stream (obuf-fill buf)))
                 ;; The usual case: it all goes now, and %WRITE-DATA will not wait.
                 (clgrpc.http2::%write-data conn stream (obuf-data buf) 0 (obuf-fill buf))
                 (%send-trailers call code message metadata))
                (t
                 (clgrpc.http2::%write-data-or-park
                  conn stream (obuf-data buf) 0 (obuf-fill buf)
                  (%trailers-after-park call code message metadata))))))
      ;; In the same hold of the lock as the trailers, not another one after.
      (%give-back-turn call)
      (release-large-scratch)
      (when (clgrpc.http2:reader-thread-p conn)
        ;; A handler run on its reactor: the reactor writes this response,
        ;; batched with the others of its read.
        (clgrpc.http2::%request-flush conn)
        (return-from server-finish nil)))
    (clgrpc.http2:flush-connection conn)))

;;; ------------------------------------------------------------------
;;; Running handlers (worker threads)

(defun %decoded-request (call)
  "The request of a unary-request call, decoded on this worker thread."
  (setf (call-request call)
        (decode-message call (call-request call) (call-request-length call)
                        (call-last-compressed call))))

(defun run-server-call (call)
  (unwind-protect (%run-server-call call)
    ;; A handler that left without finishing (a non-local exit past
    ;; SERVER-FINISH): the call fails rather than waiting for its deadline,
    ;; and gives back its slot and its streaming turn.  The flag is this
    ;; thread's own, so it can be read without the lock.
    (unless (call-handler-finished call)
      (clgrpc.http2:with-connection-lock ((call-conn call))
        (%server-fail call +internal+ "the handler did not finish")
        (%give-back-turn call)))))

(defun %run-server-call (call)
  (when (clgrpc.http2:with-connection-lock ((call-conn call))
          (when (call-status call)
            ;; Reset (or timed out) before its handler started: never run it.
            (%give-back-turn call)
            t))
    (return-from %run-server-call nil))
  (let* ((entry (call-handler call))
         (handler (method-entry-handler entry))
         (code +ok+) (message "") (response nil) (metadata nil))
    (handler-case
        (ecase (call-kind call)
          (:unary (setf response (funcall handler (%decoded-request call) call)))
          (:server-streaming (funcall handler (%decoded-request call) call))
          (:client-streaming (setf response (funcall handler call)))
          (:bidi (funcall handler call)))
      (grpc-error (e)
        (setf code (grpc-error-code e) message (grpc-error-message e)
              metadata (grpc-error-metadata e)))
      (error (e)
        (setf code +unknown+ message (or (ignore-errors (princ-to-string e)) "handler error"))))
    (when (and (= code +ok+) (null response)
               (member (call-kind call) '(:unary :client-streaming)))
      (setf code +internal+ message "handler returned no response"))
    (server-finish call code message
                   (and (= code +ok+) response)
                   (or metadata (call-trailer-metadata call)))))

(defconstant +slow-method-pool-us+ 1000000
  "How long the unary calls of a method one of whose handlers outran its
reactor's slice run on the pool before they are tried inline again.")

(defun %inline-p (server entry)
  "Whether a unary call of ENTRY's method runs on the reactor that read it
(and a client-streaming call whose request stream came whole).  Never while
as many threads as the unary pool has are still finishing handlers their
reactor was moved from: those are threads a slow method made, and the pool
bounds them."
  (declare (type method-entry entry))
  (let ((mode (server-unary-handlers server)))
    (and (not (eq mode :pool))
         (< (clgrpc.http2:handed-over-thread-count)
            (pool-max-threads (server-unary-pool server)))
         (or (eq mode :inline)
             (let ((until (method-entry-pool-until entry)))
               (or (zerop until) (< until (now-us))))))))

(defun %note-moved (call)
  "CALL's handler ran on a reactor, which went to another thread meanwhile
(http2/handover.lisp): its method's next calls go to the pool for a while."
  (setf (method-entry-pool-until (call-handler call))
        (+ (now-us) +slow-method-pool-us+)))

(defun run-inline-server-call (call)
  "Reactor thread, once its read is processed: CALL's handler, whose
response the reactor writes with the others of the read; or, if it waited
behind a handler that outran its reactor, on the unary pool."
  (if clgrpc.http2::*running-given-back*
      (let ((conn (call-conn call)))
        (clgrpc.http2:with-connection-lock (conn)
          (unless (call-status call)
            (%dispatch call (server-unary-pool (clgrpc.http2:connection-user conn))))
          (when (or (call-status call) (not (call-dispatched call)))
            ;; Ended meanwhile, or refused by a pool that is shutting down:
            ;; no handler runs to give back what a handler would.
            (%give-back-turn call))))
      (progn
        (setf (call-dispatched call) :inline)
        (run-server-call call)
        (unless (clgrpc.http2:reader-thread-p (call-conn call))
          (%note-moved call)))))

(defun %dispatch (call pool)
  (setf (call-dispatched call) t)
  (unless (pool-submit pool #'run-server-call call)
    (setf (call-dispatched call) nil)
    (%server-fail call +unavailable+ "server is shutting down")))

;;; Streaming handlers hold a pool thread for as long as the peer keeps
;;; their call open.  While the stream pool has room, every call runs at
;;; once.  Once half of it is taken, a connection already running its share
;;; (MAX-STREAMING-HANDLERS-PER-CONNECTION) queues further calls on itself,
;;; in order, until one of its own finishes: so a few peers holding
;;; thousands of idle streams cannot take the pool from a new client, whose
;;; connection is under its share.  A queued call holds a handler slot of
;;; its connection (so the queue is bounded by MAX-CONCURRENT-STREAMS) until
;;; it runs, or ends: a queued call that is cancelled or times out gives its
;;; slot back and leaves the queue at once.

(defstruct (streaming-admission (:conc-name admission-))
  (running 0 :type fixnum)              ; this connection's handlers on the pool
  (waiting (make-fifo 4) :type fifo))   ; its calls over the limit, oldest first

(defun %admission (conn)
  (or (clgrpc.http2:connection-app conn)
      (setf (clgrpc.http2:connection-app conn) (make-streaming-admission))))

(defun %pool-crowded-p (server)
  "Half of the stream pool's threads are taken or more."
  (let ((pool (server-stream-pool server)))
    (>= (* 2 (pool-busy-count pool)) (pool-max-threads pool))))

(defun %admit-streaming (call server)
  "Lock held: run CALL's streaming handler now, unless the pool is crowded
and its connection is over its share: then queue it on the connection."
  (let ((admission (%admission (call-conn call))))
    (if (or (< (admission-running admission) (server-max-streaming-handlers-per-connection server))
            (not (%pool-crowded-p server)))
        (progn (incf (admission-running admission))
               (%dispatch call (server-stream-pool server))
               (unless (call-dispatched call)
                 (decf (admission-running admission))))
        (progn (setf (call-dispatched call) :queued)
               (fifo-push (admission-waiting admission) call)))))

(defun %forget-queued (call)
  "Lock held: CALL ended while queued: out of its connection's queue."
  (let* ((waiting (admission-waiting (%admission (call-conn call))))
         (live (loop until (fifo-empty-p waiting)
                     for c = (fifo-pop waiting)
                     unless (eq c call) collect c)))
    (dolist (c live) (fifo-push waiting c))))

(defun %streaming-handler-done (call)
  "Lock held: CALL's streaming handler is over: its connection's next
waiting call, if any, takes its place."
  (let* ((conn (call-conn call))
         (admission (%admission conn))
         (server (clgrpc.http2:connection-user conn))
         (waiting (admission-waiting admission)))
    (decf (admission-running admission))
    (loop until (fifo-empty-p waiting)
          do (let ((next (fifo-pop waiting)))
               (unless (call-status next)
                 (setf (call-dispatched next) nil)
                 (%admit-streaming next server)
                 (return))))))

(defun %finish-streaming-handler (call)
  "Lock held, on the thread that ran CALL's handler: its streaming handler's
turn is over, once (a unary call has none)."
  (unless (call-handler-finished call)
    (setf (call-handler-finished call) t)
    (when (%streaming-kind-p call)
      (%streaming-handler-done call))))

(defun %streaming-kind-p (call)
  (not (eq (call-kind call) :unary)))

(defun %start-client-stream (call)
  "Reactor thread, once the read that brought CALL's headers is processed:
if every request message came with them, run its client-streaming handler
here, as a unary one (it cannot wait for the peer); else admit it to the
stream pool, as without this."
  (let ((conn (call-conn call))
        (here nil))
    (clgrpc.http2:with-connection-lock (conn)
      (unless (call-status call)
        (if (call-inbound-done call)
            (progn (incf (admission-running (%admission conn)))
                   (setf (call-dispatched call) t
                         here t))
            (%admit-streaming call (clgrpc.http2:connection-user conn)))))
    (when here
      (run-inline-server-call call))))

;;; ------------------------------------------------------------------
;;; Reader-thread callbacks (connection lock held)

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
           (let ((server (clgrpc.http2:connection-user (call-conn call))))
             (cond ((not (eq (call-kind call) :unary))
                    (%admit-streaming call server))
                   ((and (%inline-p server (call-handler call))
                         (clgrpc.http2:reader-thread-p (call-conn call)))
                    ;; Run once the reactor has released the lock.
                    (setf (call-dispatched call) t)
                    (clgrpc.http2::%defer-to-reader (call-conn call) #'run-inline-server-call call))
                   (t (%dispatch call (server-unary-pool server)))))
           (%server-fail call +internal+ "no request message")))
      (t (broadcast-if-waiting (call-waiters call) (call-cv call))))))

(defun server-deadline-expired (call)
  "Scheduler thread: the client's deadline passed."
  (let ((conn (call-conn call)))
    (clgrpc.http2:with-connection-lock (conn)
      (unless (call-status call)
        (%send-trailers call +deadline-exceeded+ "deadline exceeded" nil
                        :reset-code clgrpc.http2:+cancel+)
        (clgrpc.http2::%request-flush conn)))))

(defun start-server-call (server conn stream headers end-stream)
  (let ((method nil) (path nil) (content-type nil) (timeout nil) (encoding nil)
        (accept-encoding nil))
    (dolist (h headers)
      (let ((name (car h)))
        (declare (type simple-string name))
        (cond ((char= (char name 0) #\:)
               (cond ((string= name ":path") (setf path (cdr h)))
                     ((string= name ":method") (setf method (cdr h)))))
              ((string= name "content-type") (setf content-type (cdr h)))
              ((string= name "grpc-timeout") (setf timeout (parse-grpc-timeout (cdr h))))
              ((string= name "grpc-encoding") (setf encoding (cdr h)))
              ((string= name "grpc-accept-encoding") (setf accept-encoding (cdr h))))))
    (cond
      ((non-grpc-status method content-type)
       (start-plain-request conn stream (non-grpc-status method content-type) end-stream))
      ((and encoding (not (supported-encoding-p encoding)))
       (%trailers-only conn stream "200" +unimplemented+
                       (format nil "grpc-encoding ~A is not supported" encoding)
                       (list (cons "grpc-accept-encoding" +accepted-encodings+))))
      (t
       (let ((entry (gethash path (server-methods server))))
         (if (null entry)
             (let* ((slash (position #\/ path :start 1))
                    (service (and slash (subseq path 1 slash))))
               (%trailers-only conn stream "200" +unimplemented+
                               (if (and service (gethash service (server-services server)))
                                   (format nil "unknown method ~A for service ~A"
                                           (subseq path (1+ slash)) service)
                                   (format nil "unknown service ~A" (or service path)))))
             (let ((call (%make-call :role :server :kind (method-entry-kind entry)
                                     :conn conn :stream stream :path path
                                     :encoder (method-entry-encoder entry)
                                     :decoder (method-entry-decoder entry)
                                     :handler entry
                                     :max-receive-size (server-max-receive-message-size server)
                                     :max-send-size (server-max-send-message-size server)
                                     :recv-gzip (equal encoding "gzip")
                                     :peer-accepts-gzip (accepts-gzip-p accept-encoding)
                                     :%metadata (headers-to-metadata headers))))
               (setf (clgrpc.http2:h2-stream-user stream) call)
               (clgrpc.http2::%handler-begin conn)
               (when timeout
                 (let ((deadline (+ (now-us) timeout)))
                   (setf (call-%deadline call) deadline
                         (call-timer call) (schedule-timer #'server-deadline-expired call
                                                           deadline))))
               (case (call-kind call)
                 (:bidi (%admit-streaming call server))
                 (:client-streaming
                  (if (and (clgrpc.http2:reader-thread-p conn) (%inline-p server entry))
                      (clgrpc.http2::%defer-to-reader conn #'%start-client-stream call)
                      (%admit-streaming call server))))
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
      (when (call-timer call)
        (cancel-timer (call-timer call)))
      (%release-undispatched call)
      (broadcast-if-waiting (call-waiters call) (call-cv call)))))

;;; ------------------------------------------------------------------
;;; Lifecycle

(defun server-on-close (conn)
  (let ((server (clgrpc.http2:connection-user conn)))
    (sb-thread:with-mutex ((server-lock server))
      (remhash conn (server-connections server)))))

(defun accept-one (server socket)
  "Serve the accepted SOCKET, or close it at once when the server is full
or stopping."
  (let ((conn nil))
    (sb-thread:with-mutex ((server-lock server))
      (cond ((not (eq (server-state server) :running)))
            ((and (server-max-connections server)
                  (>= (hash-table-count (server-connections server))
                      (the fixnum (server-max-connections server))))
             (incf (server-refused-connections server)))
            (t
             (setf conn (apply #'clgrpc.http2:make-connection socket :server
                               :on-headers #'server-on-headers :on-data #'server-on-data
                               :on-reset #'server-on-reset :on-close #'server-on-close
                               :user server
                               :tls (and (server-tls server)
                                         (clgrpc.tls:make-tls-session (server-tls server)))
                               (server-connection-options server))
                   (gethash conn (server-connections server)) t))))
    (if conn
        (handler-case (clgrpc.http2:connection-start conn)
          (error () (clgrpc.http2:connection-close conn)))
        (clgrpc.net:socket-close socket))))

(defun accept-loop (server)
  (let ((listener (server-listener server)))
    (loop
      (let ((socket (clgrpc.net:tcp-accept listener)))
        (unless socket
          (return))
        ;; Nothing one connection does may stop the server accepting: an
        ;; unexpected condition (out of descriptors, say) costs that
        ;; connection only, and is logged.
        (handler-case (accept-one server socket)
          (serious-condition (e)
            (ignore-errors
             (format *error-output* "~&clgrpc: accepting a connection failed: ~A~%" e)
             (finish-output *error-output*))
            (clgrpc.net:socket-close socket)))))))

(defun server-start (server &key (host "127.0.0.1") (port 0))
  "Listen on HOST:PORT (0 picks a free port) and serve.  Returns the port."
  (unless (eq (server-state server) :new)
    (error "server already started"))
  (clgrpc.net:raise-open-file-limit)
  (let ((listener (clgrpc.net:tcp-listen host port)))
    (setf (server-listener server) listener
          (server-port server) (clgrpc.net:socket-local-port listener)
          (server-state server) :running
          (server-accept-thread server)
          (sb-thread:make-thread #'accept-loop :name "grpc accept" :arguments (list server)))
    (server-port server)))

(defun server-connection-count (server)
  (sb-thread:with-mutex ((server-lock server))
    (hash-table-count (server-connections server))))

(defun server-refused-connection-count (server)
  "Connections closed at once because MAX-CONNECTIONS was reached."
  (sb-thread:with-mutex ((server-lock server))
    (server-refused-connections server)))

(defun %seconds-left (deadline)
  (max 0 (/ (- deadline (now-us)) 1d6)))

(defun server-stop (server &key (grace 5))
  "Stop accepting, send GOAWAY on every connection, let calls in flight
finish, then close everything: GRACE seconds in all, one deadline for the
whole stop.  A connection closes by itself once its last call has ended
and its output is written; those still busy at the deadline are closed."
  (when (eq (server-state server) :running)
    (setf (server-state server) :stopping)
    (let ((deadline (+ (now-us) (round (* grace 1000000))))
          (listener (server-listener server)))
      (clgrpc.net:fd-shutdown (clgrpc.net:socket-fd listener) :both)
      (sb-thread:join-thread (server-accept-thread server) :default nil
                                                           :timeout (max 0.1 (%seconds-left deadline)))
      (clgrpc.net:socket-close listener)
      (let ((connections (sb-thread:with-mutex ((server-lock server))
                           (loop for conn being the hash-keys of (server-connections server)
                                 collect conn))))
        (dolist (conn connections)
          (clgrpc.http2:connection-send-goaway conn))
        (dolist (conn connections)
          (clgrpc.http2:connection-wait-closed conn (%seconds-left deadline)))
        (dolist (conn connections)
          (clgrpc.http2:connection-close conn))
        ;; Their reactors release the sockets at once: a last short wait,
        ;; shared by all of them.
        (let ((last (max deadline (+ (now-us) 100000))))
          (dolist (conn connections)
            (clgrpc.http2:connection-wait-closed conn (%seconds-left last)))))
      (pool-shutdown (server-unary-pool server) :timeout (%seconds-left deadline))
      (pool-shutdown (server-stream-pool server) :timeout (%seconds-left deadline)))
    (setf (server-state server) :stopped))
  nil)
