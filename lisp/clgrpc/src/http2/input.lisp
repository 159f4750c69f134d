;;;; Receiving: what each received frame does to connection and stream
;;;; state (RFC 9113 sections 4-6), and the floods it is checked against.
;;;;
;;;; The reactor (reactor-turn.lisp) reads into its large buffer and hands
;;;; every complete frame to PROCESS-INPUT in place: payloads are slices of
;;;; that buffer, never copied (CONTINUATION fragments excepted).  A stream
;;;; error (5.4.2) is answered with RST_STREAM and processing goes on; a
;;;; connection error (5.4.1) unwinds to GOAWAY and close (lifecycle.lisp).
;;;; Replies (SETTINGS ACK, PING ACK, WINDOW_UPDATE, RST_STREAM) are queued
;;;; and written without blocking once the read is processed: the reactor
;;;; must keep serving every other connection whatever this peer does.

(in-package #:clgrpc.http2)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +read-buffer-size+ (* 256 1024))

(defun %count-control-reply (conn)
  "Lock held: one more ACK or RST_STREAM queued for the peer.  A peer that
keeps asking for replies while it does not read what we send (the socket
stays full) would grow the output without bound."
  (when (and (> (incf (conn-control-queued conn))
                (limits-max-queued-control-frames (conn-limits conn)))
             (conn-write-blocked conn))
    (connection-error +enhance-your-calm+ "~D control frames queued for a peer that does not read"
                      (conn-control-queued conn))))

;;; ------------------------------------------------------------------
;;; Frames on streams that are not open

(defun %frame-on-absent-stream (conn type id)
  "TYPE arrived for stream ID, which is not in the table: idle or closed."
  (declare (type fixnum type id))
  (cond ((%stream-idle-p conn id)
         ;; 5.1: only HEADERS (and PRIORITY) may be received on an idle stream.
         (unless (= type +frame-priority+)
           (connection-error +protocol-error+ "~A on idle stream ~D" (frame-type-name type) id)))
        ((and (= type +frame-data+) (member (%recently-closed conn id) '(:ended :reset-received)))
         ;; 5.1: DATA after both sides ended the stream, or after the peer
         ;; itself reset it.
         (stream-error* id +stream-closed+ "DATA on closed stream ~D" id))
        ;; 5.4.2: frames the peer sent before it saw our RST_STREAM, and late
        ;; frames on streams closed long ago (grpc-go ignores those too).
        (t nil)))

;;; ------------------------------------------------------------------
;;; DATA (6.1)

(defun %consume-connection-window (conn n)
  "Account N received octets against the connection window; give them back
at once in batches of a quarter window.  Streams bound what each may buffer,
so the connection window only needs to stay open."
  (declare (type fixnum n))
  (when (> n (conn-recv-window conn))
    (connection-error +flow-control-error+ "DATA of ~D octets exceeds the connection window ~D"
                      n (conn-recv-window conn)))
  (decf (conn-recv-window conn) n)
  (let ((unacked (+ (conn-recv-unacked conn) n)))
    (if (>= unacked (ash (conn-local-connection-window conn) -2))
        (progn (write-window-update-frame (conn-out conn) 0 unacked)
               (incf (conn-recv-window conn) unacked)
               (setf (conn-recv-unacked conn) 0)
               (request-flush conn))
        (setf (conn-recv-unacked conn) unacked))))

(defun on-data-frame (conn flags id octets start end)
  (declare (type octet flags) (type fixnum id) (type octets octets) (type index start end))
  (multiple-value-bind (ds de) (decode-data-payload octets start end flags id)
    (declare (type index ds de))
    (let ((length (- end start))
          (end-stream (logtest flags +flag-end-stream+)))
      (with-connection-lock (conn)
        (%consume-connection-window conn length)
        (let ((stream (gethash id (conn-streams conn))))
          (cond ((null stream)
                 (%frame-on-absent-stream conn +frame-data+ id))
                ((not (stream-can-receive-p stream))
                 (stream-error* id +stream-closed+ "DATA after END_STREAM on stream ~D" id))
                ((> length (h2-stream-recv-window stream))
                 (stream-error* id +flow-control-error+
                                "DATA of ~D octets exceeds stream ~D's window ~D"
                                length id (h2-stream-recv-window stream)))
                (t
                 (decf (h2-stream-recv-window stream) length)
                 ;; Padding is flow-controlled but never reaches the
                 ;; application: consumed as soon as it arrives.
                 (let ((padding (- length (- de ds))))
                   (when (plusp padding)
                     (stream-return-window conn stream padding)))
                 (let ((expected (h2-stream-content-length stream)))
                   (when expected
                     (let ((total (+ (h2-stream-data-received stream) (- de ds))))
                       (setf (h2-stream-data-received stream) total)
                       (when (or (> total (the integer expected))
                                 (and end-stream (/= total (the integer expected))))
                         (stream-error* id +protocol-error+
                                        "DATA does not match content-length")))))
                 (when end-stream
                   (%stream-end-remote conn stream))
                 (funcall (the function (conn-on-data conn))
                          conn stream octets ds de end-stream)))))))
  nil)

;;; ------------------------------------------------------------------
;;; HEADERS (6.2), CONTINUATION (6.10) and header blocks

(defun header-value (headers name)
  (cdr (assoc name headers :test #'string=)))

(defun parse-content-length (headers id)
  (let ((value (header-value headers "content-length")))
    (when value
      (let ((n (and (plusp (length (the string value)))
                    (every #'digit-char-p (the string value))
                    (parse-integer value))))
        (or n (stream-error* id +protocol-error+ "malformed content-length"))))))

(defun check-field-block (headers kind id)
  (let ((why (malformed-field-block headers kind)))
    (when why
      (stream-error* id +protocol-error+ "malformed ~(~A~) on stream ~D: ~A" kind id why))))

(defun %open-peer-stream (conn id headers end-stream header-octets)
  "A client opens stream ID with a request (server side), whose header list
decoded to HEADER-OCTETS (as SETTINGS_MAX_HEADER_LIST_SIZE counts them)."
  (declare (type fixnum id header-octets))
  (setf (conn-max-remote-id conn) id)
  (when (conn-goaway-sent conn)
    ;; 6.8: streams above the last identifier in our GOAWAY are ignored.
    (return-from %open-peer-stream nil))
  (let ((limit (conn-local-max-concurrent conn)))
    (when (and limit (>= (conn-active-remote conn) limit))
      (stream-error* id +refused-stream+ "SETTINGS_MAX_CONCURRENT_STREAMS (~D) reached" limit))
    ;; Streams the peer reset still hold their handler's slot until the
    ;; handler is over, so resets cannot pile up work (Rapid Reset).
    (when (and limit (>= (conn-handlers conn) limit))
      (stream-error* id +refused-stream+ "~D handlers still running" (conn-handlers conn))))
  ;; Past a memory budget the newest streams are refused, and the streams
  ;; already open finish.
  (unless (budget-admits-stream-p conn)
    (stream-error* id +refused-stream+ "memory budget full (~D octets held)"
                   (conn-budget-held conn)))
  (check-field-block headers :request id)
  (let ((stream (%new-stream conn id (if end-stream :half-closed-remote :open) nil)))
    ;; Its decoded headers live as long as it does.
    (unless (stream-charge conn stream (decoded-header-octets header-octets))
      (stream-error* id +refused-stream+ "memory budget full: no room for ~D octets of headers"
                     (decoded-header-octets header-octets)))
    (setf (h2-stream-header-blocks stream) 1
          (h2-stream-content-length stream) (parse-content-length headers id))
    (when (and end-stream (h2-stream-content-length stream)
               (/= 0 (the integer (h2-stream-content-length stream))))
      (stream-error* id +protocol-error+ "content-length without DATA"))
    (setf (gethash id (conn-streams conn)) stream)
    (incf (conn-active-remote conn))
    (funcall (the function (conn-on-headers conn)) conn stream headers end-stream)))

(defun %headers-on-stream (conn stream headers end-stream)
  "A further header block on an open stream: a response head (client) or
trailers (8.1)."
  (let ((id (h2-stream-id stream))
        (n (incf (h2-stream-header-blocks stream))))
    (declare (type fixnum n))
    (unless (stream-can-receive-p stream)
      (stream-error* id +stream-closed+ "HEADERS after END_STREAM on stream ~D" id))
    (let ((kind (if (and (eq (conn-role conn) :client) (= n 1)) :response :trailers)))
      (when (and (eq kind :trailers) (not end-stream))
        (stream-error* id +protocol-error+ "trailers without END_STREAM on stream ~D" id))
      (check-field-block headers kind id)
      (when end-stream
        (%stream-end-remote conn stream))
      (funcall (the function (conn-on-headers conn)) conn stream headers end-stream))))

(defun process-header-block (conn id octets start end end-stream pending-error)
  "A complete header block for stream ID.  It is decoded first in every
case, so the HPACK state stays in step with the peer's even when the frame
is then refused."
  (declare (type fixnum id) (type octets octets) (type index start end))
  (multiple-value-bind (headers list-size)
      (handler-case (clgrpc.hpack:decode-header-block (conn-decoder conn) octets start end)
        (clgrpc.hpack:hpack-error (e)
          (connection-error +compression-error+ "~A" (clgrpc.hpack:hpack-error-message e))))
    (declare (type fixnum list-size))
    (when pending-error
      (when (and (peer-initiated-p conn id) (> id (conn-max-remote-id conn)))
        ;; The refused stream still used up its identifier.
        (setf (conn-max-remote-id conn) id))
      (error pending-error))
    (with-connection-lock (conn)
      (let ((stream (gethash id (conn-streams conn))))
        (when (> list-size (conn-local-max-header-list-size conn))
          (when (and (null stream) (peer-initiated-p conn id) (> id (conn-max-remote-id conn)))
            ;; The refused stream used up its identifier: it is closed now,
            ;; not idle (5.1.1).
            (setf (conn-max-remote-id conn) id))
          ;; 8.2.3 / 10.5.1: 431 is an HTTP answer; gRPC peers expect a reset.
          (stream-error* id +protocol-error+ "header list of ~D octets exceeds ~D"
                         list-size (conn-local-max-header-list-size conn)))
        (cond (stream
               (%headers-on-stream conn stream headers end-stream))
              ((not (peer-initiated-p conn id))
               (if (%stream-idle-p conn id)
                   (connection-error +protocol-error+ "HEADERS on idle stream ~D" id)
                   (case (%recently-closed conn id)
                     ((:ended :reset-received)
                      (connection-error +stream-closed+ "HEADERS on closed stream ~D" id))
                     (t nil))))
              ((eq (conn-role conn) :client)
               ;; A server can only open streams by PUSH_PROMISE (8.4).
               (connection-error +protocol-error+ "HEADERS on server stream ~D" id))
              ((> id (conn-max-remote-id conn))
               (%open-peer-stream conn id headers end-stream list-size))
              (t
               (case (%recently-closed conn id)
                 ((:ended :reset-received)
                  (connection-error +stream-closed+ "HEADERS on closed stream ~D" id))
                 (t
                  ;; Late trailers after our RST_STREAM are ignored (5.4.2);
                  ;; anything else reuses an identifier (5.1.1).
                  (unless (%reset-sent-p conn id)
                    (connection-error +protocol-error+
                                      "stream ~D not above the last opened stream ~D"
                                      id (conn-max-remote-id conn)))))))))))

(defun header-block-limit (conn)
  "Bound on an assembled header block.  HPACK can expand a block at most
about 3x below its decoded size, so this is generous; it stops a
CONTINUATION flood from growing memory without limit."
  (+ 16384 (* 2 (conn-local-max-header-list-size conn))))

(defun on-headers-frame (conn flags id octets start end)
  (declare (type octet flags) (type fixnum id) (type octets octets) (type index start end))
  (let ((pending nil) (bs 0) (be 0))
    (declare (type index bs be))
    (handler-case (multiple-value-setq (bs be) (decode-headers-payload octets start end flags id))
      (http2-error (e)
        (when (http2-error-connection-p e)
          (error e))
        ;; A stream depending on itself: answered after the block is decoded.
        (setf pending e)
        (multiple-value-bind (s e2) (strip-padding +frame-headers+ octets start end flags)
          (setf bs (+ s 5) be e2))))
    (let ((end-stream (logtest flags +flag-end-stream+)))
      (if (logtest flags +flag-end-headers+)
          (process-header-block conn id octets bs be end-stream pending)
          (let ((buf (or (conn-cont-buf conn) (setf (conn-cont-buf conn) (make-obuf 1024)))))
            (obuf-reset buf)
            (obuf-write-bytes buf octets bs be)
            (charge-header-block conn buf)
            (setf (conn-cont-active conn) t
                  (conn-cont-stream-id conn) id
                  (conn-cont-end-stream conn) end-stream
                  (conn-cont-pending-error conn) pending))))))

(defun on-continuation-frame (conn flags id octets start end)
  (declare (type octet flags) (type fixnum id) (type octets octets) (type index start end))
  (unless (conn-cont-active conn)
    (connection-error +protocol-error+ "CONTINUATION without a HEADERS frame on stream ~D" id))
  (multiple-value-bind (s e) (decode-continuation-payload octets start end id)
    (let ((buf (conn-cont-buf conn)))
      (obuf-write-bytes buf octets s e)
      (when (> (obuf-fill buf) (the fixnum (header-block-limit conn)))
        (connection-error +enhance-your-calm+ "header block over ~D octets"
                          (header-block-limit conn)))
      (charge-header-block conn buf)
      (when (logtest flags +flag-end-headers+)
        (setf (conn-cont-active conn) nil
              (conn-cont-buf conn) nil)
        (with-connection-lock (conn)
          (discharge-header-block conn))
        (process-header-block conn id (obuf-data buf) 0 (obuf-fill buf)
                              (conn-cont-end-stream conn) (conn-cont-pending-error conn))))))

;;; ------------------------------------------------------------------
;;; PRIORITY (6.3), RST_STREAM (6.4)

(defun on-priority-frame (conn id octets start end)
  (declare (ignore conn))
  ;; Validated (length, self-dependency) and otherwise ignored: RFC 9113
  ;; deprecates the priority scheme and gRPC does not use it.
  (decode-priority-payload octets start end id)
  nil)

(defun on-rst-stream-frame (conn id octets start end)
  (declare (type fixnum id))
  (let ((code (decode-rst-stream-payload octets start end id)))
    (with-connection-lock (conn)
      (let ((stream (gethash id (conn-streams conn))))
        (if stream
            (progn
              (when (and (peer-initiated-p conn id) (h2-stream-user stream))
                (%count-early-reset conn))
              (%close-stream conn stream :reset-received)
              (funcall (the function (conn-on-reset conn)) conn stream code :peer))
            (%frame-on-absent-stream conn +frame-rst-stream+ id))))))

(defun %count-early-reset (conn)
  "The peer reset one of its streams before we finished it.  Clients do
cancel calls; one that does so faster than the limit is flooding."
  (let ((now (clgrpc.util:now-us)))
    (when (> (- now (conn-resets-window-us conn)) 1000000)
      (setf (conn-resets-window-us conn) now
            (conn-resets-in-window conn) 0))
    (when (> (incf (conn-resets-in-window conn))
             (limits-max-early-resets-per-second (conn-limits conn)))
      (connection-error +enhance-your-calm+ "more than ~D streams reset by the peer in a second"
                        (limits-max-early-resets-per-second (conn-limits conn))))))

;;; ------------------------------------------------------------------
;;; SETTINGS (6.5)

(defun %apply-peer-setting (conn id value)
  (declare (type fixnum id value))
  (case id
    (#.+settings-header-table-size+
     (if (conn-encoder conn)
         (clgrpc.hpack:encoder-set-max-table-size (conn-encoder conn) value)
         (setf (conn-peer-header-table-size conn) value
               (conn-peer-header-table-min conn) (min value (conn-peer-header-table-min conn)))))
    (#.+settings-enable-push+
     (when (and (eq (conn-role conn) :client) (/= value 0))
       (connection-error +protocol-error+ "server sent SETTINGS_ENABLE_PUSH ~D" value)))
    (#.+settings-max-concurrent-streams+
     (setf (conn-peer-max-concurrent conn) value))
    (#.+settings-initial-window-size+
     ;; 6.9.2: the change applies to every stream's send window, which may
     ;; go negative; exceeding 2^31-1 is a connection FLOW_CONTROL_ERROR.
     (let ((delta (- value (conn-peer-initial-window conn))))
       (unless (or (zerop delta) (%shift-stream-windows conn delta))
         (connection-error +flow-control-error+
                           "SETTINGS_INITIAL_WINDOW_SIZE ~D overflows a stream's window" value))
       (setf (conn-peer-initial-window conn) value)))
    (#.+settings-max-frame-size+
     (setf (conn-peer-max-frame-size conn) value))
    (#.+settings-max-header-list-size+
     (setf (conn-peer-max-header-list-size conn) value))))

(defun on-settings-frame (conn flags id octets start end)
  (let ((settings (decode-settings-payload octets start end flags id)))
    (with-connection-lock (conn)
      (if (logtest flags +flag-ack+)
          (setf (conn-local-settings-acked conn) t)
          (progn
            (loop for (sid . value) in settings
                  do (%apply-peer-setting conn sid value))
            (setf (conn-peer-settings-seen conn) t)
            (%count-control-reply conn)
            (write-settings-ack (conn-out conn))
            (request-flush conn)
            ;; A larger SETTINGS_INITIAL_WINDOW_SIZE opens every stream's
            ;; window, as WINDOW_UPDATE does one: parked responses go on
            ;; when the output is next written (%NEXT-OUTPUT).
            (when (conn-parked conn)
              (request-flush conn))
            (clgrpc.util:broadcast-if-waiting (conn-window-waiters conn) (conn-window-cv conn)))))))

;;; ------------------------------------------------------------------
;;; PING (6.7), GOAWAY (6.8), WINDOW_UPDATE (6.9)

(defun on-ping-frame (conn flags id octets start end)
  (let ((opaque (decode-ping-payload octets start end id)))
    (with-connection-lock (conn)
      (if (logtest flags +flag-ack+)
          (progn (incf (conn-ping-acks conn))
                 (setf (conn-keepalive-ping-us conn) nil)
                 (clgrpc.util:broadcast-if-waiting (conn-window-waiters conn) (conn-window-cv conn)))
          (progn (%count-control-reply conn)
                 (write-ping-frame (conn-out conn) opaque :ack t)
                 (request-flush conn)
                 (when (eq (conn-role conn) :server)
                   (%enforce-ping-policy conn)))))))

(defun %enforce-ping-policy (conn)
  "grpc-go's keepalive enforcement: a PING sooner than the policy allows
since the previous one is a strike, unless we sent HEADERS or DATA in
between; more than two strikes end the connection."
  (let ((now (clgrpc.util:now-us))
        (last (conn-last-ping-us conn))
        (limits (conn-limits conn)))
    (setf (conn-last-ping-us conn) now)
    (if (conn-reset-ping-strikes conn)
        (setf (conn-reset-ping-strikes conn) nil
              (conn-ping-strikes conn) 0)
        (when (and last
                   (< (- now (the fixnum last))
                      (if (and (zerop (hash-table-count (conn-streams conn)))
                               (not (limits-permit-without-stream limits)))
                          7200000000    ; grpc-go's defaultPingTimeout, 2 h
                          (limits-min-ping-interval limits))))
          (when (> (incf (conn-ping-strikes conn)) 2)
            (connection-error +enhance-your-calm+ "too_many_pings"))))))

(defun on-goaway-frame (conn id octets start end)
  (multiple-value-bind (last-id code debug-start debug-end) (decode-goaway-payload octets start end id)
    (declare (type fixnum last-id debug-start debug-end))
    (with-connection-lock (conn)
      (setf (conn-peer-goaway conn)
            ;; The debug data, as far as it is printable ASCII: grpc-go's
            ;; "too_many_pings" tells a client to ping less often.
            (cons code (map 'string #'code-char
                            (subseq octets debug-start
                                    (or (position-if-not (lambda (o) (<= 32 o 126)) octets
                                                         :start debug-start :end (min debug-end (+ debug-start 256)))
                                        (min debug-end (+ debug-start 256))))))
            (conn-goaway-received conn) t
            (conn-peer-last-stream-id conn) (min last-id (conn-peer-last-stream-id conn))
            (conn-close-code conn) code)
      ;; Our streams above LAST-ID were never processed: fail them now so the
      ;; application may retry them elsewhere (8.1.4).
      (let ((refused '()))
        (loop for stream being the hash-values of (conn-streams conn)
              when (and (not (peer-initiated-p conn (h2-stream-id stream)))
                        (> (h2-stream-id stream) last-id))
                do (push stream refused))
        (dolist (stream refused)
          (%close-stream conn stream :reset-received)
          (funcall (the function (conn-on-reset conn)) conn stream +refused-stream+ :goaway)))
      (clgrpc.util:broadcast-if-waiting (conn-window-waiters conn) (conn-window-cv conn)))))

(defun on-window-update-frame (conn id octets start end)
  (declare (type fixnum id))
  (let ((increment (decode-window-update-payload octets start end id)))
    (declare (type fixnum increment))
    (with-connection-lock (conn)
      (if (zerop id)
          (let ((w (+ (conn-send-window conn) increment)))
            (when (> w +max-window-size+)
              (connection-error +flow-control-error+ "connection window overflow"))
            (setf (conn-send-window conn) w)
            (clgrpc.util:broadcast-if-waiting (conn-send-waiters conn) (conn-send-cv conn)))
          (let ((stream (gethash id (conn-streams conn))))
            (if (null stream)
                (%frame-on-absent-stream conn +frame-window-update+ id)
                (unless (%grow-stream-window conn stream increment)
                  (stream-error* id +flow-control-error+ "stream ~D window overflow" id)))))
      ;; Parked responses go on when the output is next written
      ;; (%NEXT-OUTPUT): one turn of them per flush, not one per update.
      (when (conn-parked conn)
        (request-flush conn)))))

;;; ------------------------------------------------------------------
;;; Dispatch

(defun process-frame (conn type flags id octets start end)
  (declare (type octet type flags) (type fixnum id) (type index start end))
  ;; 6.10: a header block is contiguous; anything else in between, on any
  ;; stream, is a connection error.
  (when (and (conn-cont-active conn)
             (not (and (= type +frame-continuation+) (= id (conn-cont-stream-id conn)))))
    (connection-error +protocol-error+ "~A frame inside the header block of stream ~D"
                      (frame-type-name type) (conn-cont-stream-id conn)))
  ;; 3.4: the preface ends with a SETTINGS frame.
  (unless (conn-peer-settings-seen conn)
    (unless (and (= type +frame-settings+) (not (logtest flags +flag-ack+)))
      (connection-error +protocol-error+ "first frame is ~A, not SETTINGS"
                        (frame-type-name type))))
  (case type
    (#.+frame-data+ (on-data-frame conn flags id octets start end))
    (#.+frame-headers+ (on-headers-frame conn flags id octets start end))
    (#.+frame-priority+ (on-priority-frame conn id octets start end))
    (#.+frame-rst-stream+ (on-rst-stream-frame conn id octets start end))
    (#.+frame-settings+ (on-settings-frame conn flags id octets start end))
    (#.+frame-push-promise+
     ;; We never enable push (clients send ENABLE_PUSH 0) and clients cannot
     ;; push (8.4).
     (connection-error +protocol-error+ "PUSH_PROMISE received"))
    (#.+frame-ping+ (on-ping-frame conn flags id octets start end))
    (#.+frame-goaway+ (on-goaway-frame conn id octets start end))
    (#.+frame-window-update+ (on-window-update-frame conn id octets start end))
    (#.+frame-continuation+ (on-continuation-frame conn flags id octets start end))
    (t nil)))                           ; 4.1: unknown types are ignored

(defun handle-stream-error (conn e)
  "Answer a stream error with RST_STREAM and tell the application."
  (let ((id (http2-error-stream-id e))
        (code (http2-error-code e)))
    (with-connection-lock (conn)
      (let ((stream (gethash id (conn-streams conn))))
        (%count-control-reply conn)
        (write-rst-stream-frame (conn-out conn) id code)
        (if stream
            (progn (%close-stream conn stream :reset-sent)
                   (when (h2-stream-user stream)
                     (funcall (the function (conn-on-reset conn)) conn stream code :local)))
            (%remember-closed conn id :reset-sent))
        (request-flush conn)))))

(defun %check-preface (conn buf start fill)
  "Server side: check the client preface (3.4) in BUF[START,FILL).  Returns
where frames start, or NIL while the preface is still incomplete."
  (declare (type octets buf) (type fixnum start fill))
  (let* ((seen (conn-preface-seen conn))
         (n (length +connection-preface+))
         (take (min (- n seen) (- fill start))))
    (declare (type fixnum seen n take))
    (unless (loop for i of-type fixnum from 0 below take
                  always (= (aref buf (+ start i)) (aref +connection-preface+ (+ seen i))))
      (connection-error +protocol-error+ "invalid connection preface"))
    (setf (conn-preface-seen conn) (+ seen take))
    (and (= (+ seen take) n) (+ start take))))

(defun process-input (conn buf pos fill)
  "Process the complete frames in BUF[POS,FILL) while the turn's budget
lasts (TURN-FRAMES, TURN-OCTETS).  Returns the position of the first octet
not processed, and true as a second value if that is a whole frame left
for want of budget (else a partial frame, or nothing).  Signals HTTP2-ERROR
for a connection error."
  (declare (type octets buf) (type fixnum pos fill))
  (let ((max-frame (conn-local-max-frame-size conn)))
    (declare (type fixnum max-frame))
    (loop
      (when (< (- fill pos) 9)
        (return (values pos nil)))
      (when (or (<= (conn-turn-frames conn) 0) (<= (conn-turn-octets conn) 0))
        (return (values pos (>= (- fill pos) (+ 9 (the fixnum (read-u24 buf pos)))))))
      (multiple-value-bind (length type flags id) (decode-frame-header buf pos)
        (declare (type fixnum length id))
        (check-frame-size length type max-frame)
        (let ((frame-end (+ pos 9 length)))
          (when (> frame-end fill)
            (return (values pos nil)))
          (decf (conn-turn-frames conn))
          (decf (conn-turn-octets conn) (+ 9 length))
          (handler-case (process-frame conn type flags id buf (+ pos 9) frame-end)
            (http2-error (e)
              (if (http2-error-connection-p e)
                  (error e)
                  (handle-stream-error conn e))))
          (setf pos frame-end))))))
