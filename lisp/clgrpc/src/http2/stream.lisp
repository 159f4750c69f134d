;;;; HTTP/2 stream state (RFC 9113 section 5.1).
;;;;
;;;; Only the states gRPC can reach exist: idle streams are not materialized
;;;; (an identifier above the highest one seen is idle by definition, 5.1.1),
;;;; and the reserved states need PUSH_PROMISE, which we never send and refuse
;;;; to receive.  A stream object lives in its connection's table from open to
;;;; closed; after that only its identifier is remembered (see connection.lisp)
;;;; to tell "closed" from "idle" for late frames.

(in-package #:clgrpc.http2)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(deftype stream-state () '(member :open :half-closed-local :half-closed-remote :closed))

(defstruct (h2-stream (:constructor make-h2-stream (id state send-window recv-window user)))
  (id 0 :type stream-id)                ; 0 until a client stream's HEADERS are written
  (state :open :type stream-state)
  ;; Send window, less the connection's SEND-WINDOW-SHIFT (STREAM-SEND-WINDOW
  ;; adds it back), so that a change of SETTINGS_INITIAL_WINDOW_SIZE costs
  ;; the same whatever the number of streams.  Signed: a smaller initial
  ;; window can make a window negative (6.9.2).
  (send-window 0 :type fixnum)
  ;; On the connection's WINDOW-WAITING list (a sender waits for this
  ;; stream's window).
  (window-waiting nil)
  ;; What the peer may still send, and what the application consumed but we
  ;; have not yet returned with WINDOW_UPDATE.
  (recv-window 0 :type fixnum)
  (recv-unacked 0 :type fixnum)
  ;; Header blocks received: the first is the request or response head, the
  ;; next must be trailers (8.1).
  (header-blocks 0 :type fixnum)
  ;; content-length, when the peer sent one, and DATA octets seen (8.1.1).
  (content-length nil :type (or null (integer 0)))
  (data-received 0 :type (integer 0))
  ;; DATA waiting for window or for its turn, PARKED[PARKED-START,
  ;; PARKED-END), the octets charged for it, and what to do once it is sent
  ;; (STREAM-WRITE-LAST-DATA).
  (parked nil :type (or null octets))
  (parked-start 0 :type fixnum)
  (parked-end 0 :type fixnum)
  (parked-charge 0 :type fixnum)
  (parked-then nil :type (or null function))
  (parked-end-stream nil)               ; the last parked DATA ends the stream
  ;; A streaming sender has written part of a message and waits to write
  ;; the rest (%WRITE-DATA).
  (mid-message nil)
  ;; Senders waiting for this stream's window (%WRITE-DATA); the queue is
  ;; made when the first one waits.
  (send-cv nil :type (or null sb-thread:waitqueue))
  (send-waiters 0 :type fixnum)
  ;; The application's work for this stream holds one of the connection's
  ;; handler slots (CLAIM-HANDLER-SLOT).
  (holds-slot nil)
  ;; Octets the application holds for this stream, charged to the
  ;; connection's memory budget (STREAM-CHARGE).
  (held 0 :type fixnum)
  ;; The application's object for this stream (the gRPC call).
  (user nil))

(defun stream-mid-message-p (stream)
  "Part of a message is out and the rest still to come (parked, or its
sender waiting): the stream cannot end with trailers now, only be reset."
  (or (h2-stream-parked stream) (h2-stream-mid-message stream)))

(declaim (inline stream-can-receive-p stream-can-send-p))
(defun stream-can-receive-p (stream)
  "The peer may still send DATA or HEADERS on STREAM."
  (let ((state (h2-stream-state stream)))
    (or (eq state :open) (eq state :half-closed-local))))

(defun stream-can-send-p (stream)
  (let ((state (h2-stream-state stream)))
    (or (eq state :open) (eq state :half-closed-remote))))
