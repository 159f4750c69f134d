;;;; Bidi handlers called once per message (REGISTER-METHOD's :EACH-MESSAGE).
;;;;
;;;; A bidi handler of the usual kind is a thread for the whole call: it
;;;; waits in CALL-RECV between messages, so every message wakes it (a
;;;; futex call and a context switch), and many streams mean as many
;;;; threads.  A method registered with :EACH-MESSAGE T has no thread of its
;;;; own: its handler is called as (handler message call) for each request
;;;; message, in order, on the executor, and once more as (handler NIL call)
;;;; when the client has finished sending; the call then ends with OK, or
;;;; with the status of a GRPC-ERROR the handler signalled at any point.  It
;;;; answers with CALL-SEND, as any bidi handler does, and must not call
;;;; CALL-RECV.  A call that ends otherwise (cancelled, past its deadline)
;;;; calls its handler no more.  This is grpc-java's StreamObserver, or the asynchronous
;;;; server of gRPC's C++ benchmarks.
;;;;
;;;; What runs the handler is a DRAIN task: the messages a reactor turn
;;;; delivers go to the executor in the turn's batch (one hand-off per turn,
;;;; however many streams), and a call has at most one drain queued or
;;;; running (CALL-DRAIN-PENDING, under the connection lock), which takes
;;;; every message that has arrived before it lets go: so order is kept and
;;;; a call's messages never run side by side.  A drain is also what gives
;;;; the call's handler slot back once the call is over, however it ended
;;;; (%CALL-OVER schedules one).

(in-package #:clgrpc.grpc)

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
    (let ((conn (call-conn call)))
      (cond ((clgrpc.http2:reader-thread-p conn)
             (clgrpc.http2:hand-off conn #'drain-messages call :responds t))
            ((not (executor-submit (server-executor (clgrpc.http2:connection-user conn))
                                   (clgrpc.http2:connection-lane conn) #'drain-messages call))
             (setf (call-drain-pending call) nil)
             (%server-fail call +unavailable+ "server is shutting down")
             (%give-back-turn call))))))

(defun %next-drain-step (call)
  "Lock held, on CALL's drain: what to do next, as (values step octets
length compressed): :MESSAGE, :END (the client finished sending), or :DONE
(nothing has arrived: the drain lets go; or the call is over: its handler
slot goes back)."
  (cond ((call-status call)
         (setf (call-drain-pending call) nil)
         (%give-back-turn call)
         :done)
        (t
         (multiple-value-bind (octets length compressed) (%take-message call)
           (cond (octets (values :message octets length compressed))
                 ((call-inbound-done call) :end)
                 (t
                  (setf (call-drain-pending call) nil)
                  ;; Reading the next message: what arrived of it goes back
                  ;; to the peer as it comes (framing.lisp).
                  (%start-reading call)
                  :done))))))

(defun drain-messages (call)
  "Executor: call CALL's handler for each message that has arrived, in
order, and for the end of the client's messages; end the call if the
handler signals."
  (let ((conn (call-conn call))
        (handler (method-entry-handler (call-handler call))))
    (loop
      (multiple-value-bind (step octets length compressed)
          (clgrpc.http2:with-connection-lock (conn)
            (%next-drain-step call))
        (when (eq step :done)
          (return))
        (multiple-value-bind (code message metadata)
            (handler-case
                (progn
                  (if (eq step :message)
                      (funcall handler (%decode-or-fail call octets length compressed) call)
                      (funcall handler nil call))
                  (if (eq step :end) +ok+ nil))
              (grpc-error (e)
                (values (grpc-error-code e) (grpc-error-message e) (grpc-error-metadata e)))
              (error (e)
                (values +unknown+ (or (ignore-errors (princ-to-string e)) "handler error")))
              (storage-condition ()
                (values +resource-exhausted+ "the server ran out of memory for this call")))
          (when code
            ;; Over: trailers, and the slot back.  A drain scheduled since
            ;; (the call's end) finds the handler finished and does nothing.
            (server-finish call code (or message "") nil
                           (or metadata (call-trailer-metadata call)))
            (clgrpc.http2:with-connection-lock (conn)
              (setf (call-drain-pending call) nil))
            (return)))))))
