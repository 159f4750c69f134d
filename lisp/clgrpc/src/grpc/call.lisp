;;;; The call: one RPC on one HTTP/2 stream, on either side.
;;;;
;;;; A call's mutable state is guarded by its connection's lock (see
;;;; http2/connection.lisp), the same lock the reader thread holds when it
;;;; delivers frames, so delivering a message, finishing a call and waking the
;;;; thread waiting for it never take a second lock.  CV is the call's own
;;;; wait queue, used with that lock.
;;;;
;;;; STATUS is NIL while the call runs.  On a server it is set when the call
;;;; finishes (trailers sent, deadline, client cancel); on a client when the
;;;; trailers arrive or the call fails locally.  Whoever sets it first wins.

(in-package #:clgrpc.grpc)

(deftype method-kind () '(member :unary :server-streaming :client-streaming :bidi))

(defun raw-encoder (message buf)
  "The identity codec: MESSAGE is an octet vector, written as is."
  (obuf-write-bytes buf message))

(defun raw-decoder (octets start end)
  "The identity codec: a fresh octet vector of the message."
  (subseq octets start end))

(defstruct (call (:constructor %make-call))
  (role :server :type (member :server :client))
  (kind :unary :type method-kind)
  (conn nil)
  (stream nil)
  (path "" :type string)
  (encoder #'raw-encoder :type function)
  (decoder #'raw-decoder :type function)
  (cv (sb-thread:make-waitqueue :name "grpc call") :type sb-thread:waitqueue)
  (waiters 0 :type fixnum)              ; threads waiting on CV (COUNTED-WAIT)
  (max-receive-size 4194304 :type fixnum)
  (max-send-size most-positive-fixnum :type fixnum)
  ;; ---- inbound messages, each as four entries: its octets, its length,
  ;; its flow-control octets and whether it came compressed (framing.lisp)
  (inbox nil :type (or null fifo))
  (inbound-done nil)                    ; the peer half-closed
  (wake-deferred nil)                   ; the reactor will wake the receiver (framing.lisp)
  (received 0 :type fixnum)             ; messages received
  ;; Message octets (as on the wire, compressed or not) received and
  ;; encoded to send: what metrics report of a call.
  (octets-received 0 :type fixnum)
  (octets-sent 0 :type fixnum)
  ;; server: the request of a unary-request call, as octets until the
  ;; worker decodes it
  (request nil)
  (request-length 0 :type fixnum)
  ;; message assembly (framing.lisp)
  (asm-prefix 0 :type (integer 0 5))   ; prefix octets seen for the current message
  (asm-flag 0 :type (unsigned-byte 8))
  (asm-length 0 :type (unsigned-byte 32))
  (asm-buf nil :type (or null obuf))
  ;; Flow-control octets of the message being assembled that are held until
  ;; the application reads it (framing.lisp).
  (asm-held 0 :type fixnum)
  ;; When octets of the message being assembled last arrived (or the
  ;; application began to read it), and the timer that fails the call if
  ;; the rest stops coming (framing.lisp).
  (asm-progress-us 0 :type fixnum)
  (stall-timer nil)
  ;; ---- compression (compression.lisp)
  (send-gzip nil)                       ; our HEADERS declared grpc-encoding: gzip
  (compress nil)                        ; send messages compressed unless told otherwise
  (recv-gzip nil)                       ; the peer declared grpc-encoding: gzip
  (peer-accepts-gzip nil)               ; server: the client's grpc-accept-encoding has gzip
  (last-compressed nil)                 ; the message last taken was compressed
  ;; ---- outbound
  (headers-sent nil)                    ; server: response HEADERS written
  (head-received nil)                   ; client: response HEADERS received
  (send-closed nil)                     ; client: END_STREAM sent
  ;; ---- client: transparent retry (client-callbacks.lisp, client.lisp)
  (channel nil)
  (request-octets nil :type (or null octets)) ; the encoded request of a unary-request call
  (messages-sent 0 :type fixnum)
  (attempts 1 :type fixnum)
  (retry-pending nil)                   ; another attempt is due (T), or being made
  ;; ---- client: retries under the channel's retry policy (retry.lisp)
  (retry-policy nil)
  (retry-throttle nil)                  ; the channel's, shared by its calls
  (retries 0 :type fixnum)              ; attempts made again under the policy
  (previous-attempts 0 :type fixnum)    ; hedges sent before this one (hedging.lisp)
  (backoff-step 0 :type fixnum)         ; retries since the last pushback
  (retry-at nil :type (or null fixnum)) ; NOW-US time the pending retry waits for
  (committed nil)                       ; no further attempt can be made
  (wait-for-ready nil)                  ; ride out failures to connect
  (replay nil :type list)               ; request messages sent, newest first
  (replay-octets 0 :type fixnum)
  ;; ---- client: what observes each attempt (interceptors.lisp)
  (attempt-hooks nil :type list)        ; called as each attempt starts
  (attempt-finishers nil :type list)    ; what they returned, for its end
  (attempt-open nil)                    ; an attempt has started and not ended
  ;; Message octets the attempt under way wrote, and those the call had
  ;; received before it began (CALL-ATTEMPT-MESSAGE-OCTETS).
  (attempt-octets-sent 0 :type fixnum)
  (attempt-received-base 0 :type fixnum)
  ;; ---- outcome
  (status nil :type (or null fixnum))
  (status-message "" :type string)
  (status-details nil :type list)       ; a rich error's (status-details.lisp)
  (trailers nil :type list)             ; client: trailing metadata received
  ;; ---- metadata
  (%metadata nil :type list)            ; server: request metadata; client: sent
  (%response-metadata nil :type list)   ; server: to send; client: received
  (trailer-metadata nil :type list)     ; server: to send in trailers
  ;; ---- deadline
  (%deadline nil :type (or null fixnum)) ; NOW-US time
  (timer nil)
  ;; ---- server side
  (handler nil)
  ;; The handler was queued or started (dispatch.lisp).
  (dispatched nil)
  ;; The handler is over and its call finished (server): set once, under
  ;; the connection lock, by the thread that ran it.
  (handler-finished nil)
  ;; A drain of its messages is queued or running (each-message.lisp).
  (drain-pending nil)
  (user nil)
  ;; Functions to call once it has its status, and what interceptors keep
  ;; with the call (interceptors.lisp).
  (finish-hooks nil :type list)
  (properties nil :type list)
  ;; Functions around CALL-SEND and CALL-RECV, the last registered first
  ;; (interceptors.lisp).
  (send-wrappers nil :type list)
  (recv-wrappers nil :type list)
  ;; Server: when its request's HEADERS arrived (NOW-US).
  (%start-us 0 :type fixnum))

(declaim (ftype function each-message-call-p schedule-drain run-finish-hooks end-attempt))

(defun %call-over (call)
  "Lock held: CALL has its status.  Its timers go, so they no longer keep
it, and so does any message it was assembling, and its charge.  A call
whose handler runs per message has no thread to notice: a drain gives its
handler slot back."
  (when (each-message-call-p call)
    (schedule-drain call))
  (when (call-attempt-open call)
    ;; A client's attempt under way ends with the call, whatever ended it.
    (end-attempt call (call-status call)))
  (when (call-finish-hooks call)
    (run-finish-hooks call))
  (when (call-timer call)
    (cancel-timer (call-timer call)))
  (when (call-stall-timer call)
    (cancel-timer (shiftf (call-stall-timer call) nil)))
  (let ((buf (shiftf (call-asm-buf call) nil)))
    (when (and buf (call-stream call))
      (clgrpc.http2:stream-discharge (call-conn call) (call-stream call)
                                     (length (obuf-data buf))))))

;;; Public accessors under exported names.
(defun call-start-us (call)
  "Server: when CALL began, its HEADERS read (CLGRPC.UTIL:NOW-US's clock)."
  (call-%start-us call))
(defun call-state (call)
  "What the application keeps with CALL, NIL at first: for example what a
handler called per message (:EACH-MESSAGE) gathers from one message to the
next."
  (call-user call))
(defun (setf call-state) (value call)
  (setf (call-user call) value))
(defun call-metadata (call)
  "Server: the request's custom metadata.  Client: the metadata sent."
  (call-%metadata call))
(defun call-response-metadata (call) (call-%response-metadata call))
(defun call-peer-trailers (call) (call-trailers call))
(defun call-status-code (call) (call-status call))
(defun call-message-octets (call)
  "(values sent received): the octets of the messages CALL sent and
received, as they went on the wire (compressed, when they were)."
  (values (call-octets-sent call) (call-octets-received call)))
(defun call-attempt-count (call)
  "Client: the attempts CALL has made (retries and transparent retries
included)."
  (call-attempts call))

(defun call-method-path (call) (call-path call))
(defun call-deadline (call)
  "The deadline in seconds from now (a real), or NIL."
  (let ((d (call-%deadline call)))
    (and d (/ (- d (now-us)) 1d6))))

(defun call-peer-tls (call)
  "The TLS session of CALL's connection (a clgrpc.tls:tls-session: its
protocol version, and the peer's verified certificate subject and alternative
names, which a service can authorise by), or NIL over plaintext."
  (let ((conn (call-conn call)))
    (and conn (clgrpc.http2:connection-tls conn))))

(defun call-received-compressed-p (call)
  "Whether the message last received (the request, on a unary-request
server call) came compressed."
  (call-last-compressed call))

(defun call-cancelled-p (call)
  "True once the call can no longer succeed: on a server, the client
cancelled, the deadline passed or the call already finished."
  (not (null (call-status call))))
