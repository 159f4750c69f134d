;;;; Where handlers run.
;;;;
;;;; Off the reactor, by default.  A request that the reactor completes is
;;;; handed off (CLGRPC.HTTP2:HAND-OFF) and every request of one turn goes to
;;;; the server's executor in one batch (clgrpc.util's executor.lisp): one
;;;; lock and at most one wake-up per turn, however many calls it carried.
;;;; The executor grows as handlers block, so a handler that waits on a
;;;; database or computes for milliseconds holds up no other call, on its
;;;; connection or any other.  Each call is one task: its messages reach
;;;; its handler in order through the call's inbox.
;;;;
;;;; Inline, where the application asks for it: a method registered with
;;;; :INLINE T (a handler that never blocks and takes microseconds) runs on
;;;; the reactor once the turn's frames are processed, and its response
;;;; leaves with the turn's other output.  Each inline call is timed; a
;;;; method one of whose calls took +INLINE-STALL-US+, or whose p99 over a
;;;; window of calls is above +INLINE-SLOW-US+, is demoted to the executor
;;;; for good, with one log line.
;;;;
;;;; Streaming handlers hold a thread for as long as the peer keeps their
;;;; call open.  While the executor has room, every call runs at once.  Once
;;;; half of it is busy, a connection already running its share
;;;; (MAX-STREAMING-HANDLERS-PER-CONNECTION) queues further calls on itself,
;;;; in order, until one of its own finishes: so a few peers holding
;;;; thousands of idle streams cannot take the pool from a new client, whose
;;;; connection is under its share.  A queued call holds a handler slot of
;;;; its connection (so the queue is bounded by MAX-CONCURRENT-STREAMS) until
;;;; it runs, or ends: a queued call that is cancelled or times out gives its
;;;; slot back and leaves the queue at once.

(in-package #:clgrpc.grpc)

(defconstant +inline-slow-us+ 1000
  "An inline method whose p99 is above this is demoted to the executor.")
(defconstant +inline-stall-us+ 20000
  "An inline method one of whose calls took this long is demoted at once:
the reactor served none of its other connections meanwhile.")
(defconstant +inline-window+ 1000
  "Inline calls per window over which a method's p99 is judged.")
(defconstant +inline-min-calls+ 100
  "Calls a window needs before its p99 is judged.")

(defstruct (streaming-admission (:conc-name admission-))
  (running 0 :type fixnum)              ; this connection's streaming handlers dispatched
  (waiting (make-fifo 4) :type fifo))   ; its calls over the limit, oldest first

(defun make-handler-executor (max-threads)
  (let ((cpus (usable-cpu-count)))
    (make-executor :name "grpc handler" :lanes cpus
                   :min-threads (min cpus max-threads) :max-threads max-threads
                   :keep-idle (max 16 (* 4 cpus)) :cpus cpus
                   :wrapper #'scratch-wrapper)))

;;; ------------------------------------------------------------------
;;; Running a handler (executor or reactor)

(defun %decoded-request (call)
  "The request of a unary-request call, decoded on the thread that runs its
handler."
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
      (clgrpc.http2:with-stream-output ((call-conn call))
        (%server-fail call +internal+ "the handler did not finish")
        (%give-back-turn call)))))

(defun %run-server-call (call)
  (when (clgrpc.http2:with-connection-lock ((call-conn call))
          (if (call-status call)
              ;; Reset (or timed out) before its handler started: never run it.
              (progn (%give-back-turn call) t)
              (progn
                ;; The request's octets become garbage once decoded, below:
                ;; what the handler keeps of it is the application's memory.
                (when (member (call-kind call) '(:unary :server-streaming))
                  (clgrpc.http2:stream-discharge (call-conn call) (call-stream call)
                                                 (call-request-length call)))
                nil)))
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
              metadata (grpc-error-metadata e)
              (call-status-details call) (grpc-error-details e)))
      (error (e)
        (setf code +unknown+ message (or (ignore-errors (princ-to-string e)) "handler error")))
      (storage-condition ()
        ;; The heap or a stack ran out inside the handler: its call fails,
        ;; the thread and the server go on.
        (setf code +resource-exhausted+ message "the server ran out of memory for this call")))
    (when (and (= code +ok+) (null response)
               (member (call-kind call) '(:unary :client-streaming)))
      (setf code +internal+ message "handler returned no response"))
    (server-finish call code message
                   (and (= code +ok+) response)
                   (or metadata (call-trailer-metadata call)))))

;;; ------------------------------------------------------------------
;;; Handler slots and streaming turns (connection lock held)

(declaim (ftype function %finish-streaming-handler %forget-queued each-message-call-p submit-drain
                %drain-over))

(defun %release-slot (call)
  "Lock held: give CALL's handler slot back to its connection, once."
  (clgrpc.http2:release-handler-slot (call-conn call) (call-stream call)))

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

;;; ------------------------------------------------------------------
;;; To the executor (connection lock held)

(defun %run-on-executor (call)
  "Lock held: CALL's handler goes to the server's executor: with the rest
of the turn's work on the reactor, else at once."
  (let ((conn (call-conn call)))
    (setf (call-dispatched call) t)
    (if (clgrpc.http2:reader-thread-p conn)
        (clgrpc.http2:hand-off conn #'run-server-call call
                               ;; Its request is whole: it answers once it has run.
                               :responds (member (call-kind call) '(:unary :server-streaming)))
        (unless (executor-submit (server-executor (clgrpc.http2:connection-user conn))
                                 (clgrpc.http2:connection-lane conn) #'run-server-call call)
          (setf (call-dispatched call) nil)
          (%server-fail call +unavailable+ "server is shutting down")))))

(defun server-on-abandon (conn function call)
  "Lock held: the executor refused FUNCTION's run for CALL, its handler or
a drain, as the server is stopping.  The call fails, and gives back what
that run would have: its handler slot and its streaming turn."
  (declare (ignore conn function))
  (%server-fail call +unavailable+ "server is shutting down")
  (%give-back-turn call)
  ;; A call whose handler runs per message hands off only its drains.
  (when (each-message-call-p call)
    (%drain-over call)))

;;; ------------------------------------------------------------------
;;; Inline (reactor thread)

(defun %note-inline-time (entry us)
  "An inline call of ENTRY's method took US microseconds: demote the method
if it proves slow."
  (declare (type method-entry entry) (type fixnum us))
  (let ((calls (incf (method-entry-inline-calls entry)))
        (slow (if (> us +inline-slow-us+)
                  (incf (method-entry-inline-slow entry))
                  (method-entry-inline-slow entry))))
    (declare (type fixnum calls slow))
    (cond ((or (>= us +inline-stall-us+)
               (and (>= calls +inline-min-calls+) (> (* 100 slow) calls)))
           (when (sb-ext:compare-and-swap (method-entry-inline entry) t nil)
             (log-line "~A is registered inline but ~A; its calls run on the executor from now on"
                       (method-entry-path entry)
                       (if (>= us +inline-stall-us+)
                           (format nil "one call took ~D us" us)
                           (format nil "its p99 is above ~D us" +inline-slow-us+)))))
          ((>= calls +inline-window+)
           (setf (method-entry-inline-calls entry) 0
                 (method-entry-inline-slow entry) 0)))))

(defun run-inline-server-call (call)
  "Reactor thread, once its turn's frames are processed: CALL's handler,
whose response the reactor writes with the rest of the turn."
  (setf (call-dispatched call) :inline)
  (let ((start (now-us)))
    (run-server-call call)
    (%note-inline-time (call-handler call) (- (now-us) start))))

(defun %start-client-stream (call)
  "Reactor thread, once the turn that brought CALL's headers is processed:
a client-streaming call of an inline method whose request messages all came
with them runs here, as a unary one (it cannot wait for the peer); else it
is admitted to the executor."
  (let ((conn (call-conn call))
        (here nil))
    (clgrpc.http2:with-connection-lock (conn)
      (unless (call-status call)
        (if (call-inbound-done call)
            (progn (%streaming-handler-begins conn)
                   (setf (call-dispatched call) t
                         here t))
            (%admit-streaming call (clgrpc.http2:connection-user conn)))))
    (when here
      (run-inline-server-call call))))

;;; ------------------------------------------------------------------
;;; Streaming admission (connection lock held)

(defun %admission (conn)
  (or (clgrpc.http2:connection-app conn)
      (setf (clgrpc.http2:connection-app conn) (make-streaming-admission))))

(defun %executor-crowded-p (server)
  "Streaming handlers hold half of the executor's threads or more."
  (>= (* 2 (server-streaming-handlers server)) (executor-max-threads (server-executor server))))

(defun %streaming-handler-begins (conn)
  "Lock held: a streaming handler of CONN is dispatched."
  (incf (admission-running (%admission conn)))
  (sb-ext:atomic-incf (server-streaming-handlers (clgrpc.http2:connection-user conn))))

(defun %streaming-handler-ends (conn)
  "Lock held: a streaming handler of CONN is over (or was never run)."
  (decf (admission-running (%admission conn)))
  (sb-ext:atomic-decf (server-streaming-handlers (clgrpc.http2:connection-user conn))))

(defun %admit-streaming (call server)
  "Lock held: run CALL's streaming handler now, unless the executor is
crowded and its connection is over its share: then queue it on the
connection."
  (let ((admission (%admission (call-conn call))))
    (cond ((and (>= (admission-running admission) (server-max-streaming-handlers-per-connection server))
                (%executor-crowded-p server))
           ;; A drain (each-message.lisp) stays pending while it waits here.
           (unless (each-message-call-p call)
             (setf (call-dispatched call) :queued))
           (fifo-push (admission-waiting admission) call))
          ((each-message-call-p call)
           (%streaming-handler-begins (call-conn call))
           (submit-drain call))
          (t
           (%streaming-handler-begins (call-conn call))
           (%run-on-executor call)
           (unless (call-dispatched call)
             (%streaming-handler-ends (call-conn call)))))))

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
    (%streaming-handler-ends conn)
    (loop until (fifo-empty-p waiting)
          do (let ((next (fifo-pop waiting)))
               (cond ((each-message-call-p next)
                      ;; Its drain runs even if the call is over meanwhile:
                      ;; that is what gives its handler slot back.
                      (%admit-streaming next server)
                      (return))
                     ((not (call-status next))
                      (setf (call-dispatched next) nil)
                      (%admit-streaming next server)
                      (return)))))))

(defun %finish-streaming-handler (call)
  "Lock held, on the thread that ran CALL's handler: its streaming handler's
turn is over, once (a unary call has none)."
  (unless (call-handler-finished call)
    (setf (call-handler-finished call) t)
    ;; A handler run per message: its drains take and give back the turns.
    (unless (or (eq (call-kind call) :unary) (each-message-call-p call))
      (%streaming-handler-done call))))
