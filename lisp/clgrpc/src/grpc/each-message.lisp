;;;; Bidi and client-streaming handlers called once per message
;;;; (REGISTER-METHOD's :EACH-MESSAGE).
;;;;
;;;; A streaming handler of the usual kind is a thread for the whole call:
;;;; it waits in CALL-RECV between messages, so every message wakes it (a
;;;; futex call and a context switch), and many streams mean as many
;;;; threads.  A method registered with :EACH-MESSAGE T has no thread of its
;;;; own: its handler is called as (handler message call) for each request
;;;; message, in order, on the executor, and once more as (handler NIL call)
;;;; when the client has finished sending; the call ends as soon as that
;;;; returns (so sends from other threads fail after it): with OK, and for
;;;; a client-streaming method with the response that last call returned;
;;;; or with the status of a GRPC-ERROR the handler signalled at any point.
;;;; A bidi handler answers with CALL-SEND; a client-streaming one keeps
;;;; what it gathers in CALL-STATE.  CALL-RECV signals an error.
;;;; A call that ends otherwise (cancelled, past its deadline) calls its
;;;; handler no more.  This is grpc-java's StreamObserver, or the
;;;; asynchronous server of gRPC's C++ benchmarks.
;;;;
;;;; What runs the handler is a DRAIN task: the messages a reactor turn
;;;; delivers go to the executor in the turn's batch (one hand-off per turn,
;;;; however many streams), and a call has at most one drain queued or
;;;; running (CALL-DRAIN-PENDING, under the connection lock), which takes
;;;; what has arrived before it lets go: so order is kept and a call's
;;;; messages never run side by side.  A drain takes at most +DRAIN-BATCH+
;;;; messages and then queues itself again behind the executor's other
;;;; work, so a busy stream does not keep a worker from other calls.  A
;;;; drain is also what gives the call's handler slot back once the call is
;;;; over, however it ended (%CALL-OVER schedules one).
;;;;
;;;; A drain holds a streaming turn of its connection while it is queued or
;;;; runs, as a thread-per-call handler holds one for its whole call
;;;; (dispatch.lisp): a handler can block in CALL-SEND on a peer that does
;;;; not read, so once the executor is crowded a connection over its share
;;;; queues its drains on itself.

(in-package #:clgrpc.grpc)

(defconstant +drain-batch+ 16
  "Messages a drain hands its handler before it queues itself again.")

(defun each-message-call-p (call)
  "CALL is a server call of a method registered with :EACH-MESSAGE."
  (let ((entry (call-handler call)))
    (and (eq (call-role call) :server)
         (method-entry-p entry)
         (method-entry-each-message entry))))

(declaim (ftype function drain-messages))

(defun schedule-drain (call)
  "Lock held: have a drain run CALL's handler for what has arrived, unless
one is queued or running (it takes that too), or the handler is over."
  (unless (or (call-drain-pending call) (call-handler-finished call))
    (setf (call-drain-pending call) t
          (call-dispatched call) t)
    (%admit-streaming call (clgrpc.http2:connection-user (call-conn call)))))

(defun %drain-over (call)
  "Lock held: CALL's drain lets go: no longer pending, and its streaming
turn goes to its connection's next waiting call."
  (setf (call-drain-pending call) nil)
  (%streaming-handler-done call))

(defun %drain-answers-p (call)
  "Lock held: the drain about to run will call the handler, which may
answer (a bidi handler with any message, a client-streaming one only at
the end), rather than only give back the slot of a call that is over."
  (and (null (call-status call))
       (or (call-inbound-done call)
           (and (eq (call-kind call) :bidi)
                (let ((inbox (call-inbox call)))
                  (and inbox (not (fifo-empty-p inbox))))))))

(defun submit-drain (call)
  "Lock held, CALL's drain admitted (dispatch.lisp): queue it on the
executor, with the reactor's batch on the reactor.  If the executor takes
nothing more (the server is stopping), the call fails now."
  (let ((conn (call-conn call)))
    (cond ((clgrpc.http2:reader-thread-p conn)
           (clgrpc.http2:hand-off conn #'drain-messages call :responds (%drain-answers-p call)))
          ((executor-submit (server-executor (clgrpc.http2:connection-user conn))
                            (clgrpc.http2:connection-lane conn) #'drain-messages call))
          (t
           (%server-fail call +unavailable+ "server is shutting down")
           (%give-back-turn call)
           (%drain-over call)))))

(defun %next-drain-step (call)
  "Lock held, on CALL's drain: what to do next, as (values step octets
length compressed): :MESSAGE, :END (the client finished sending), or :DONE
(nothing has arrived: the drain lets go; or the call is over: its handler
slot goes back)."
  (cond ((call-status call)
         (%give-back-turn call)
         (%drain-over call)
         :done)
        (t
         (multiple-value-bind (octets length compressed) (%take-message call)
           (cond (octets
                  (when (let ((inbox (call-inbox call)))
                          (or (null inbox) (fifo-empty-p inbox)))
                    ;; Reading the next message from now on: what arrives
                    ;; of it goes back to the peer as it comes, and its
                    ;; time without progress starts now (framing.lisp).
                    (%start-reading call))
                  (values :message octets length compressed))
                 ((call-inbound-done call) :end)
                 (t
                  (%start-reading call)
                  (%drain-over call)
                  :done))))))

(defun %run-handler (call handler step octets length compressed)
  "Call HANDLER for STEP (:MESSAGE or :END).  Returns NIL to go on, or the
status that ends the call: (values code message metadata response)."
  (handler-case
      (if (eq step :message)
          (progn (funcall handler (%decode-or-fail call octets length compressed) call)
                 nil)
          (let ((result (funcall handler nil call)))
            (cond ((not (eq (call-kind call) :client-streaming)) +ok+)
                  (result (values +ok+ nil nil result))
                  (t (values +internal+ "handler returned no response")))))
    (grpc-error (e)
      (setf (call-status-details call) (grpc-error-details e))
      (values (grpc-error-code e) (grpc-error-message e) (grpc-error-metadata e)))
    (error (e)
      (values +unknown+ (or (ignore-errors (princ-to-string e)) "handler error")))
    (storage-condition ()
      (values +resource-exhausted+ "the server ran out of memory for this call"))))

(defun drain-messages (call)
  "Executor: call CALL's handler for each message that has arrived, in
order, up to +DRAIN-BATCH+, and for the end of the client's messages; end
the call if the handler signals.  A drain left by a non-local exit (a
timeout, an interrupt) fails its call and lets go, as RUN-SERVER-CALL does."
  (let ((conn (call-conn call))
        (handler (method-entry-handler (call-handler call)))
        (finished nil))
    (unwind-protect
         (loop repeat +drain-batch+
               do (multiple-value-bind (step octets length compressed)
                      (clgrpc.http2:with-connection-lock (conn)
                        (%next-drain-step call))
                    (when (eq step :done)
                      (setf finished t)
                      (return))
                    (multiple-value-bind (code message metadata response)
                        (%run-handler call handler step octets length compressed)
                      (when code
                        (server-finish call code (or message "") response
                                       (or metadata (call-trailer-metadata call)))
                        (clgrpc.http2:with-connection-lock (conn)
                          (%drain-over call))
                        (setf finished t)
                        (return))))
               finally
                  ;; More may wait: behind the executor's other work.
                  (clgrpc.http2:with-connection-lock (conn)
                    (setf finished t)
                    (submit-drain call)))
      (unless finished
        (clgrpc.http2:with-stream-output (conn)
          (%server-fail call +internal+ "the handler did not finish")
          (%give-back-turn call)
          (%drain-over call))))))
