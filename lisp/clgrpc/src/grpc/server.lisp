;;;; The gRPC server: its method registry and its options.
;;;;
;;;; The rest of the server is in the files that follow, one concern each:
;;;; respond.lisp writes responses and trailers, dispatch.lisp decides where
;;;; each handler runs, server-calls.lisp is what the HTTP/2 reactor calls for
;;;; each request, and server-lifecycle.lisp accepts connections and stops.
;;;; DESIGN.md describes the execution model as a whole.

(in-package #:clgrpc.grpc)

(defstruct (method-entry (:constructor make-method-entry
                             (path kind handler encoder decoder inline each-message)))
  (path "" :type string)
  (kind :unary :type method-kind)
  (handler nil :type function)
  (encoder nil :type function)
  (decoder nil :type function)
  ;; Declared inline: its handlers run on the reactor that read the call
  ;; (dispatch.lisp), until they prove slow and the method is demoted.
  (inline nil)
  ;; A handler called per message, holding no thread (each-message.lisp).
  (each-message nil)
  ;; Inline calls run, and those over +INLINE-SLOW-US+, in the window at hand.
  (inline-calls 0 :type fixnum)
  (inline-slow 0 :type fixnum))

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
  ;; Where handlers run (dispatch.lisp), and the streaming handlers
  ;; dispatched to it and not finished (atomic).
  (executor nil)
  (streaming-handlers 0 :type sb-ext:word)
  ;; Streaming handlers one connection may have running at once while the
  ;; executor is crowded; its further calls wait for its own to finish
  ;; (ADMIT-STREAMING).
  (max-streaming-handlers-per-connection 100 :type fixnum)
  (max-receive-message-size 4194304 :type fixnum)
  (max-send-message-size most-positive-fixnum :type fixnum)
  (connection-options '() :type list)
  ;; A clgrpc.tls server context: every connection speaks TLS.
  (tls nil :type (or null clgrpc.tls:tls-context))
  ;; Wrapped around every handler registered, and told of every request
  ;; (interceptors.lisp).
  (interceptors '() :type list)
  (call-observers '() :type list)
  (state :new :type (member :new :running :stopping :stopped)))

(defun scratch-wrapper (thunk)
  (let ((*scratch* (make-obuf 4096)))
    (funcall thunk)))

;;; Reactors run inline handlers: they get a scratch buffer too.
(setf clgrpc.http2:*reactor-thread-wrapper* #'scratch-wrapper)

(defun seconds-to-us (seconds)
  (and seconds (round (* seconds 1000000))))

(defun make-server (&key (max-receive-message-size 4194304)
                         (max-send-message-size most-positive-fixnum)
                         (max-handler-threads 4096)
                         (max-concurrent-streams 1000)
                         (initial-window-size 1048576)
                         (connection-window-size 4194304)
                         (max-header-list-size 65536)
                         (max-streaming-handlers-per-connection 100)
                         max-connections
                         (handshake-timeout 120)
                         (keepalive-time 7200) (keepalive-timeout 20)
                         max-connection-idle max-connection-age max-connection-age-grace
                         (keepalive-min-time 300) keepalive-permit-without-stream
                         (max-queued-control-frames 1000)
                         (max-early-resets-per-second 1000)
                         (send-stall-timeout 120)
                         (receive-stall-timeout 30)
                         (max-connection-memory (* 64 1024 1024))
                         (max-process-memory (clgrpc.http2:default-process-octets))
                         (max-calls 65536)
                         tls interceptors call-observers)
  "A server with no methods yet.  TLS, a server context of
clgrpc.tls:make-server-context, makes it serve HTTP/2 over TLS only (ALPN
h2); a handler finds the client's verified identity with CALL-PEER-TLS.

Handlers run on the server's executor, an elastic pool of threads that
grows as handlers block, up to MAX-HANDLER-THREADS (dispatch.lisp): a
handler may wait on a database or another service, or compute, without
holding up any other call.  A method registered with :INLINE T runs on the
reactor that read its request instead, saving the hand-off: for handlers
that never block and take microseconds (REGISTER-METHOD).  A connection
runs at most MAX-STREAMING-HANDLERS-PER-CONNECTION streaming handlers once
half of the executor is busy; its further calls wait, in order, for its
own to finish, so no peer can take the whole pool from the others.

Limits, in seconds where they are times (NIL: none), with grpc-go's
defaults: MAX-CONNECTIONS (beyond it new connections are closed at once),
HANDSHAKE-TIMEOUT for the client preface and SETTINGS, keepalive
(KEEPALIVE-TIME, KEEPALIVE-TIMEOUT, MAX-CONNECTION-IDLE, MAX-CONNECTION-AGE,
MAX-CONNECTION-AGE-GRACE) and its enforcement (KEEPALIVE-MIN-TIME,
KEEPALIVE-PERMIT-WITHOUT-STREAM), MAX-QUEUED-CONTROL-FRAMES for a peer that
does not read, and MAX-EARLY-RESETS-PER-SECOND against Rapid Reset.
SEND-STALL-TIMEOUT bounds how long a handler sending a message waits for a
client that opens no window and reads nothing: the call then fails and its
stream is reset.  RECEIVE-STALL-TIMEOUT bounds how long a request message
that stopped arriving midway is waited for (the call then fails), and how
long a connection holding streams may send nothing before it is pinged.

Memory (octets): a connection's streams may hold MAX-CONNECTION-MEMORY
(at least twice MAX-RECEIVE-MESSAGE-SIZE) of messages being assembled,
requests waiting for their handler, messages queued for a handler,
responses parked for a window and decoded headers, and all connections
together MAX-PROCESS-MEMORY (a quarter of the heap); at most MAX-CALLS
handlers are in flight.  Past a limit, a message that needs more fails its
call with RESOURCE_EXHAUSTED, a response waits for window on its worker
instead of parked (four at a time per connection, within an overdraft of
an eighth of MAX-PROCESS-MEMORY over all of them; beyond them it fails with
RESOURCE_EXHAUSTED), and new streams are refused (REFUSED_STREAM).

INTERCEPTORS, functions (interceptor call request next), wrap every
handler REGISTER-METHOD registers, the first outermost; CALL-OBSERVERS,
functions (observer path registered), are told of every gRPC request,
those refused before a handler is chosen too (interceptors.lisp)."
  (when tls
    (check-type tls clgrpc.tls:tls-context)
    (unless (eq (clgrpc.tls:tls-context-role tls) :server)
      (error "make-server: TLS needs a server context")))
  (%make-server
   :tls tls
   :interceptors interceptors
   :call-observers call-observers
   :max-streaming-handlers-per-connection max-streaming-handlers-per-connection
   :max-connections max-connections
   :max-receive-message-size max-receive-message-size
   :max-send-message-size max-send-message-size
   :executor (make-handler-executor max-handler-threads)
   :connection-options (list :max-concurrent-streams max-concurrent-streams
                             :initial-window-size initial-window-size
                             :connection-window-size connection-window-size
                             :max-header-list-size max-header-list-size
                             :send-stall-timeout send-stall-timeout
                             :budget (clgrpc.http2:make-memory-budget
                                      ;; Room for two messages of the
                                      ;; largest size a call may receive.
                                      :connection-octets (max max-connection-memory
                                                              (* 2 max-receive-message-size))
                                      :process-octets max-process-memory
                                      :calls max-calls)
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
                                      max-early-resets-per-second
                                      :receive-stall-timeout
                                      (seconds-to-us receive-stall-timeout)))))

(defun server-memory-held (server)
  "Octets SERVER's connections hold for their streams (what
MAKE-SERVER's MAX-PROCESS-MEMORY bounds)."
  (clgrpc.http2:memory-budget-held (getf (server-connection-options server) :budget)))

(defun register-method (server path handler &key (kind :unary)
                                                 (request-decoder #'raw-decoder)
                                                 (response-encoder #'raw-encoder)
                                                 inline each-message)
  "Serve PATH (\"/package.Service/Method\") with HANDLER:
  :UNARY             (handler request call) => response
  :SERVER-STREAMING  (handler request call), sending with CALL-SEND
  :CLIENT-STREAMING  (handler call) => response, receiving with CALL-RECV
  :BIDI              (handler call), with CALL-RECV and CALL-SEND
Signalling GRPC-ERROR ends the call with its status; any other error ends
it with UNKNOWN.

INLINE true declares a unary (or client-streaming) handler that never
blocks and takes microseconds: it then runs on the reactor that read its
request, with no hand-off to a worker, and the responses to one read leave
in one write.  The reactor serves none of its other connections meanwhile,
so a handler declared inline that proves slow (dispatch.lisp) is demoted
to the executor for good, with one log line.

EACH-MESSAGE true, for a :BIDI or :CLIENT-STREAMING method, has HANDLER
called as (handler message call) for each request message, in order, and
as (handler NIL call) once the client has finished sending, on the
executor and holding no thread between messages (each-message.lisp).  It
never calls CALL-RECV; a bidi handler answers with CALL-SEND, a
client-streaming one with what its last call returns (not before the
client has finished sending), and keeps what it gathers meanwhile in
CALL-STATE."
  (check-type kind method-kind)
  (when (and each-message (not (member kind '(:bidi :client-streaming))))
    (error "~A: :each-message is for :bidi and :client-streaming methods, not ~S" path kind))
  (when (and each-message inline (eq kind :client-streaming))
    (error "~A: a client-streaming method is :inline or :each-message, not both" path))
  (let ((slash (position #\/ path :start 1)))
    (unless (and (> (length path) 1) (char= (char path 0) #\/) slash)
      (error "method path ~S is not /service/method" path))
    (setf (gethash (subseq path 1 slash) (server-services server)) t))
  (setf (gethash path (server-methods server))
        (make-method-entry path kind
                           (intercepted-handler (server-interceptors server) kind each-message handler)
                           response-encoder request-decoder
                           (and inline (member kind '(:unary :client-streaming)) t)
                           (and each-message t)))
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

