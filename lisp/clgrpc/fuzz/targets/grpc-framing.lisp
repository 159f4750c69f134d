;;;; gRPC length-prefixed messages (grpc/framing.lisp): a stream of DATA
;;;; payloads run through a call's message assembler in arbitrary chunks,
;;;; then each complete message inflated (if flagged) and decoded.
;;;;
;;;;   config (1) | chunking (1) | stream ...
;;;;
;;;; CONFIG bit 0: the peer declared grpc-encoding gzip; bits 1-2 choose the
;;;; receive limit; bit 3 gives the connection a memory budget of 20,000
;;;; octets.  CHUNKING seeds the sizes the stream is cut into (0: one
;;;; chunk).  The assembler never signals (a bad prefix fails the call), and
;;;; must deliver the same messages however the stream is cut (with a budget,
;;;; a cut stream may fail RESOURCE_EXHAUSTED sooner: its assembly buffer
;;;; is charged too); decoding one signals GRPC-ERROR, the documented
;;;; rejection.  Once every message is taken and the call is over, it holds
;;;; nothing against the budget.

(in-package #:clgrpc.fuzz)

(defparameter *receive-limits* #(65536 16384 100 0)
  "Small, so that a compressed message inflates to the limit quickly.")

(defconstant +framing-budget+ 20000
  "A connection budget smaller than the largest message a stream may carry.")

(defun framing-connection (&optional budget)
  "A connection that never connects, for what the assembler asks of one:
its memory budget (BUDGET octets, or none, so every charge fits) and its
receive-stall timeout (none, so no timers)."
  (clgrpc.http2::%make-connection
   :role :client
   :budget (and budget (clgrpc.http2:make-memory-budget :connection-octets budget
                                                        :process-octets (* 2 budget)))
   :limits (clgrpc.http2:make-connection-limits :receive-stall-timeout nil)))

(defun framing-call (config conn)
  (clgrpc.grpc::%make-call
   :role :client :kind :bidi :conn conn
   ;; Id 0, a stream whose HEADERS are not written yet: failing the call
   ;; writes no RST_STREAM, so the connection keeps no state across calls.
   :stream (clgrpc.http2::make-h2-stream 0 :open 65535 65535 nil)
   :decoder (let ((type (first *message-types*)))
              (lambda (octets start end) (clgrpc.protobuf:decode-message type octets start end)))
   :recv-gzip (logbitp 0 config)
   :max-receive-size (aref *receive-limits* (ldb (byte 2 1) config))))

(defun chunk-sizes (chunking)
  "A generator of chunk sizes: all at once for 0, otherwise pseudo-random
sizes up to a bound CHUNKING's low bits choose (1 octet to 16 KiB)."
  (let ((state chunking)
        (bound (aref #(1 2 5 9 64 700 4096 16384) (ldb (byte 3 0) chunking))))
    (lambda (left)
      (if (zerop chunking)
          left
          (progn (setf state (ldb (byte 32 0) (+ (* state 1103515245) 12345)))
                 (1+ (mod (ash state -8) bound)))))))

(defun assemble (conn config chunking octets start)
  "Feed OCTETS[START,) to a fresh call on CONN in chunks.  Returns the call
and its delivered messages, each (octets length window compressed)."
  (let ((call (framing-call config conn))
        (next-size (chunk-sizes chunking))
        (pos start))
    (loop while (< pos (length octets))
          do (let ((end (min (length octets) (+ pos (funcall next-size (- (length octets) pos))))))
               (clgrpc.grpc::%feed call conn (clgrpc.grpc::call-stream call) octets pos end)
               (setf pos end)))
    (values call (take-messages call))))

(defun take-messages (call)
  "CALL's delivered messages, each (octets length window compressed), taken
as the application takes them (their charges go back), then the call is
over."
  (prog1 (loop for window = (let ((inbox (clgrpc.grpc::call-inbox call)))
                              (and inbox (not (clgrpc.util:fifo-empty-p inbox))
                                   (clgrpc.util:fifo-peek inbox 2)))
               while window
               collect (multiple-value-bind (octets length compressed)
                           (clgrpc.grpc::%take-message call)
                         (list octets length window compressed)))
    (clgrpc.grpc::%call-over call)))

(defun resource-exhausted-p (call)
  (eql (clgrpc.grpc::call-status call) clgrpc.grpc:+resource-exhausted+))

(defun check-nothing-held (conn call)
  (let ((stream (clgrpc.grpc::call-stream call)))
    (check (zerop (clgrpc.http2::h2-stream-held stream))
           "the call is over and still holds ~D octets" (clgrpc.http2::h2-stream-held stream))
    (check (zerop (clgrpc.http2::conn-budget-held conn))
           "the connection still holds ~D octets" (clgrpc.http2::conn-budget-held conn))))

(defun message-octets (delivered)
  (destructuring-bind (octets length &rest rest) delivered
    (declare (ignore rest))
    (subseq octets 0 length)))

(defun run-framing (connections octets)
  (when (>= (length octets) 2)
    (let* ((config (aref octets 0)) (chunking (aref octets 1))
           (conn (if (logbitp 3 config) (cdr connections) (car connections))))
      (multiple-value-bind (call messages) (assemble conn config chunking octets 2)
        (check-nothing-held conn call)
        (multiple-value-bind (whole whole-messages) (assemble conn config 0 octets 2)
          (check-nothing-held conn whole)
          (if (or (resource-exhausted-p call) (resource-exhausted-p whole))
              ;; The run that ran out of budget stopped first: what it
              ;; delivered, the other delivered too, and a difference in
              ;; status is that run's RESOURCE_EXHAUSTED.
              (flet ((stopped-first-p (short short-messages long-messages)
                       (and (resource-exhausted-p short)
                            (<= (length short-messages) (length long-messages))
                            (equalp (mapcar #'message-octets short-messages)
                                    (mapcar #'message-octets
                                            (subseq long-messages 0 (length short-messages)))))))
                (check (or (stopped-first-p call messages whole-messages)
                           (stopped-first-p whole whole-messages messages))
                       "status ~A with ~D messages in chunks, ~A with ~D whole: no budget explains it"
                       (clgrpc.grpc::call-status call) (length messages)
                       (clgrpc.grpc::call-status whole) (length whole-messages)))
              (progn
                (check (eql (clgrpc.grpc::call-status call) (clgrpc.grpc::call-status whole))
                       "status ~A in chunks, ~A whole" (clgrpc.grpc::call-status call)
                       (clgrpc.grpc::call-status whole))
                (check (equalp (mapcar #'message-octets messages)
                               (mapcar #'message-octets whole-messages))
                       "~D messages in chunks, ~D whole, or different ones" (length messages)
                       (length whole-messages)))))
        (unless (clgrpc.grpc::call-status call)
          ;; Flow control: every octet fed is either in a delivered message's
          ;; window or held for the message being assembled.
          (let ((accounted (+ (loop for m in messages sum (third m))
                              (clgrpc.grpc::call-asm-held call))))
            (check (= accounted (- (length octets) 2))
                   "~D octets fed, ~D accounted for" (- (length octets) 2) accounted)))
        (loop for (message length nil compressed) in messages
              do (clgrpc.grpc::decode-message call message length compressed))))))

(defun framed (message &key compress)
  "MESSAGE (octets) behind its gRPC prefix, gzipped if COMPRESS."
  (let ((body (if compress (gzip-of message) message)))
    (concatenate 'octets (octets-from (if compress 1 0)) (integer-octets (length body) 4 t) body)))

(defun framing-seeds ()
  (let ((small (clgrpc.protobuf:serialize (pb-make "EVERYTHING" :f-int32 5 :names '("a" "b")
                                                                :counts '(("k" . 1)))))
        (large (clgrpc.protobuf:serialize (pb-make "EVERYTHING" :f-bytes (make-octets 17000)))))
    (flet ((stream (config chunking &rest messages)
             (apply #'concatenate 'octets (octets-from config chunking) messages)))
      (list
       (cons "one" (stream 0 0 (framed small)))
       (cons "three-chunked" (stream 0 #x13 (framed small) (framed (make-octets 0)) (framed small)))
       (cons "byte-at-a-time" (stream 0 #x08 (framed small) (framed small)))
       (cons "compressed" (stream 1 #x25 (framed small :compress t) (framed small)))
       (cons "compressed-without-encoding" (stream 0 0 (framed small :compress t)))
       (cons "over-limit" (stream 4 #x0e (framed small)))
       (cons "large-chunked" (stream 0 #x06 (framed large)))
       (cons "partial" (stream 0 #x04 (subseq (framed small) 0 9)))
       (cons "budget-large-chunked" (stream 8 #x06 (framed small) (framed large)))
       (cons "budget-empties" (apply #'stream 8 #x13
                                     (make-list 400 :initial-element (framed (make-octets 0)))))))))

(define-target "grpc-framing"
  :files '((:clgrpc . "src/grpc/framing.lisp")
           (:clgrpc . "src/grpc/compression.lisp"))
  :runner (lambda ()
            (let ((connections (cons (framing-connection)
                                     (framing-connection +framing-budget+))))
              (lambda (octets) (run-framing connections octets))))
  :expected '(clgrpc.grpc:grpc-error)
  :seeds #'framing-seeds
  :max-length 20000
  :allocation-budget (lambda (n) (+ (* 8 (aref *receive-limits* 0)) (* 1024 1024) (* 256 n)))
  ;; Prefixes: uncompressed and compressed, lengths 0, small, at and past the
  ;; limits; a bad flag.
  :tokens (list (octets-from 0 0 0 0 0) (octets-from 0 0 0 0 5) (octets-from 1 0 0 0 #x20)
                (octets-from 0 0 1 0 0) (octets-from 0 0 0 0 #x65) (octets-from 2 0 0 0 1)
                (octets-from 0 #xff #xff #xff #xff) (octets-from #x1f #x8b 8 0)))
