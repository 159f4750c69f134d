;;;; Interceptors, on both sides, and the hook that tells them how a call
;;;; ended.
;;;;
;;;; A server's interceptors (MAKE-SERVER :INTERCEPTORS) wrap every handler
;;;; registered with it, the first outermost: each is called as
;;;; (interceptor call request next), REQUEST being the decoded request of
;;;; a unary or server-streaming call (for a method called per message,
;;;; :EACH-MESSAGE, the message, or NIL once the client finished sending;
;;;; NIL for the other streaming calls), and goes on with
;;;; (funcall next request), which returns what the handler returns.  It
;;;; may read the call's metadata, set response and trailer metadata, end
;;;; the call by signalling GRPC-ERROR instead of going on, or see the
;;;; handler's error.
;;;;
;;;; A channel's interceptors (MAKE-CHANNEL :INTERCEPTORS) are called as
;;;; (interceptor info next), the first outermost.  INFO is a CALL-INFO:
;;;; the method, the kind, and the metadata, timeout and request (of a
;;;; unary or server-streaming call) the call will have, which it may
;;;; change; (funcall next) makes the call and returns
;;;; what the call function returns: (values response call) for a unary
;;;; call, the call itself for a streaming one.  It may end the call by
;;;; signalling GRPC-ERROR instead.  CALL-INFO-ON-FINISH registers, before
;;;; the call starts, a function to call when it ends (below); a call that
;;;; never started (no connection could be made) has none called: NEXT
;;;; signals its GRPC-ERROR instead.
;;;;
;;;; CALL-INFO-ON-ATTEMPT registers a function that sees each attempt of
;;;; the call, as grpc-go's stats handlers do: the first, each retry under
;;;; the retry policy, each transparent retry, and each hedge.  It is
;;;; called as (fn call) when the attempt starts, even one that never
;;;; reaches a connection, and returns NIL or a function called once as
;;;; (finish call code) when that attempt ends with status CODE, before the
;;;; call's own CALL-ON-FINISH functions when it is the call's last.  Both
;;;; may run with the connection's lock held, as call-on-finish functions
;;;; do.  CALL-ATTEMPT-MESSAGE-OCTETS gives what the attempt sent and
;;;; received, messages sent again by a retry included.
;;;;
;;;; CALL-PROPERTY keeps what an interceptor wants to find again on a
;;;; call, as grpc-go's interceptors keep values in a context.
;;;;
;;;; CALL-WRAP-MESSAGES puts functions around a streaming call's messages,
;;;; as grpc-go's stream interceptors wrap SendMsg and RecvMsg: a server
;;;; interceptor wraps the call it is given, a channel interceptor the call
;;;; NEXT returned.  A send wrapper is called as (fn call message next)
;;;; for each CALL-SEND and goes on with (funcall next message), perhaps
;;;; another message; a receive wrapper as (fn call next) for each
;;;; CALL-RECV, returning what (funcall next) returned (a message, or NIL
;;;; at the end of the stream) or something else in its place.  What
;;;; either signals reaches the caller of CALL-SEND or CALL-RECV, as a
;;;; grpc-go stream interceptor's error does: a handler that does not
;;;; handle a GRPC-ERROR ends its call with that status.  Wrappers nest as
;;;; grpc-go's wrapped streams do: the last registered is nearest the
;;;; application and sees each message first (on a channel, the outermost
;;;; interceptor's, which wraps last; on a server, the innermost's).  A
;;;; client-streaming response, read by CALL-CLOSE-AND-RECV, passes the
;;;; receive wrappers too.  Unary requests and responses are not wrapped:
;;;; the interceptors see them (the request, and what NEXT returns).
;;;;
;;;; A server's call observers (MAKE-SERVER :CALL-OBSERVERS) see what
;;;; interceptors cannot: every gRPC request, those answered before any
;;;; handler (UNIMPLEMENTED) or failed before theirs ran (a message too
;;;; large, a deadline while queued) too, as grpc-go's stats handlers do.
;;;; Each is called as (observer path registered) when the request's
;;;; HEADERS arrive, REGISTERED being whether the server serves PATH, and
;;;; returns NIL or a function called as (finish code call) once the
;;;; request ends with status CODE (CALL is NIL for one refused before a
;;;; call was made).  Both run on the reactor with the connection's lock
;;;; held, as call-on-finish functions do.
;;;;
;;;; How a call ended, whatever ended it (its handler, its deadline, the
;;;; peer, a retry giving up), reaches the functions CALL-ON-FINISH
;;;; registered: each is called once, as (fn call), with CALL-STATUS-CODE
;;;; set, by the thread that ended the call and with its connection's lock
;;;; held, so it must be quick and must not wait (count, note a time).

(in-package #:clgrpc.grpc)

(defstruct (call-info (:constructor make-call-info (method kind metadata timeout target request)))
  "What a client interceptor sees of a call before it starts."
  (method "" :type string)
  (request nil)                         ; of a unary or server-streaming call
  (target "" :type string)              ; the channel's target, canonical (dns:///host:port)
  (kind :unary :type method-kind)
  (metadata '() :type list)
  (timeout nil :type (or null real))
  (finish-hooks '() :type list)
  (attempt-hooks '() :type list))

(defun call-info-on-finish (info fn)
  "Have FN called as (fn call) when the call INFO describes ends."
  (push fn (call-info-finish-hooks info))
  info)

(defun call-info-on-attempt (info fn)
  "Have FN called as (fn call) as each attempt of the call INFO describes
starts; what it returns, if not NIL, is called as (finish call code) when
that attempt ends (see above)."
  (push fn (call-info-attempt-hooks info))
  info)

(defun %run-guarded (fn call &rest args)
  (handler-case (apply fn call args)
    (error (e)
      (log-line "an attempt function of ~A failed: ~A" (call-path call) e)
      nil)))

(defun begin-attempt (call)
  "CALL makes an attempt: its attempt hooks see it start.  Lock held, or
CALL not yet seen by another thread.  Nothing for a call already over, or
while the attempt before has not ended."
  (unless (or (call-status call) (call-attempt-open call))
    (setf (call-attempt-open call) t
          (call-attempt-received-base call) (call-octets-received call)
          ;; Counted as the attempt writes them (%WRITE-REQUEST, CALL-SEND).
          (call-attempt-octets-sent call) 0)
    (when (call-attempt-hooks call)
      (setf (call-attempt-finishers call)
            (loop for hook in (call-attempt-hooks call)
                  for finish = (%run-guarded hook call)
                  when finish collect finish)))))

(defun end-attempt (call code)
  "Lock held (or CALL seen by no other thread): the attempt under way, if
any, ended with status CODE."
  (when (call-attempt-open call)
    (setf (call-attempt-open call) nil)
    (dolist (finish (shiftf (call-attempt-finishers call) nil))
      (%run-guarded finish call code))))

(defun call-attempt-message-octets (call)
  "Client: (values sent received), the message octets of CALL's attempt
under way (or its last), as on the wire."
  (values (call-attempt-octets-sent call)
          (- (call-octets-received call) (call-attempt-received-base call))))

(defun call-wrap-messages (call &key send recv)
  "Wrap CALL's CALL-SEND in SEND, (send call message next), and its
CALL-RECV in RECV, (recv call next), inside any wrappers it has (see
above).  Returns CALL."
  (when send
    (push send (call-send-wrappers call)))
  (when recv
    (push recv (call-recv-wrappers call)))
  call)

(defun call-property (call key)
  "What was kept on CALL under KEY (compared with EQ), or NIL."
  (getf (call-properties call) key))

(defun (setf call-property) (value call key)
  (setf (getf (call-properties call) key) value))

(defun call-on-finish (call fn)
  "Have FN called as (fn call) once CALL has its status (see above); at
once, if it already has."
  (with-call-conn-lock (call)
    (if (call-status call)
        (funcall fn call)
        (push fn (call-finish-hooks call))))
  call)

(defun run-finish-hooks (call)
  "Lock held: CALL has its status."
  (let ((hooks (shiftf (call-finish-hooks call) nil)))
    (dolist (fn (reverse hooks))
      (handler-case (funcall fn call)
        (error (e)
          (log-line "a call-on-finish function of ~A failed: ~A" (call-path call) e))))))

(defun intercepted-handler (interceptors kind each-message handler)
  "HANDLER, registered for a method of KIND, wrapped in INTERCEPTORS."
  (labels ((chain (list call request final)
             (if (null list)
                 (funcall final request)
                 (funcall (the function (first list)) call request
                          (lambda (request) (chain (rest list) call request final))))))
    (cond ((null interceptors) handler)
          ((or each-message (member kind '(:unary :server-streaming)))
           (lambda (request call)
             (chain interceptors call request (lambda (request) (funcall handler request call)))))
          (t
           (lambda (call)
             (chain interceptors call nil (lambda (request)
                                            (declare (ignore request))
                                            (funcall handler call))))))))

(defun run-client-interceptors (interceptors info perform)
  "PERFORM, a function of the call's metadata, timeout, finish functions,
attempt functions and request that makes it, through INTERCEPTORS with
INFO."
  (labels ((chain (list)
             (if (null list)
                 (funcall perform (call-info-metadata info) (call-info-timeout info)
                          (reverse (call-info-finish-hooks info))
                          (reverse (call-info-attempt-hooks info))
                          (call-info-request info))
                 (funcall (the function (first list)) info (lambda () (chain (rest list)))))))
    (chain interceptors)))
