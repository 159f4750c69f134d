;;;; The HTTP/2 connection object: settings of both endpoints, the stream
;;;; table and identifier rules (5.1.1), flow-control windows (5.2, 6.9), and
;;;; the output buffers.
;;;;
;;;; Concurrency model.  One reader thread per connection parses frames; any
;;;; thread may write.  A single mutex (LOCK) guards all mutable state: the
;;;; stream table, windows, the HPACK encoder (header blocks must reach the
;;;; wire in encoding order) and the output buffer.  The application (gRPC)
;;;; keeps its per-stream state under the same lock: the reader invokes its
;;;; callbacks with the lock held, so there is no lock ordering to get wrong
;;;; and a DATA frame costs one lock acquisition.  Callbacks must not block
;;;; and must use only the %-functions, which expect the lock held.
;;;;
;;;; Frames are appended to OUT and written by whoever flushes (output.lisp):
;;;; bursts from many threads coalesce into one send(2).

(in-package #:clgrpc.http2)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +recent-closed-count+ 64
  "How many closed stream identifiers we remember, to answer late frames on
them as RFC 9113 5.1 asks (ignore after our RST_STREAM, STREAM_CLOSED
otherwise) rather than as on streams closed long ago.")

(defstruct (connection (:constructor %make-connection) (:conc-name conn-))
  (role :server :type (member :client :server))
  (socket nil)
  (fd -1 :type fixnum)
  (lock (sb-thread:make-mutex :name "h2 connection") :type sb-thread:mutex)
  ;; Broadcast when a send window grows, a stream closes, a stream slot frees
  ;; up, a PING is acknowledged, or the connection closes.
  (window-cv (sb-thread:make-waitqueue) :type sb-thread:waitqueue)
  (window-waiters 0 :type fixnum)       ; threads waiting on WINDOW-CV (COUNTED-WAIT)
  ;; ---- output (output.lisp)
  (out (make-obuf 65536) :type obuf)
  (spare (make-obuf 65536) :type obuf)
  (flushing nil)                        ; a thread is writing SPARE to the socket
  (writer-wanted nil)                   ; the writer thread should flush
  (reader-flush nil)                    ; the reader queued frames it will write itself
  ;; Work for the reader thread once it has released the lock: function,
  ;; argument, ... newest first (see %DEFER-TO-READER).  Only the reader
  ;; thread touches it.
  (deferred '() :type list)
  (reader-wrapper nil :type (or null function)) ; (lambda (thunk)) around the reader
  (writer-cv (sb-thread:make-waitqueue) :type sb-thread:waitqueue)
  (drain-cv (sb-thread:make-waitqueue) :type sb-thread:waitqueue)
  (drain-waiters 0 :type fixnum)        ; threads waiting on DRAIN-CV (COUNTED-WAIT)
  (writer-thread nil)
  (reader-thread nil)
  ;; ---- HPACK; the decoder is only touched by the reader thread
  (encoder (clgrpc.hpack:make-encoder) :type clgrpc.hpack:encoder)
  (decoder (clgrpc.hpack:make-decoder) :type clgrpc.hpack:decoder)
  ;; ---- streams
  (streams (make-hash-table :test 'eql) :type hash-table)
  (active-local 0 :type fixnum)         ; open streams we initiated
  (active-remote 0 :type fixnum)        ; open streams the peer initiated
  (next-stream-id 1 :type fixnum)       ; for streams we initiate
  (max-remote-id 0 :type fixnum)        ; highest stream id the peer opened
  (recent-ids (make-array +recent-closed-count+ :element-type 'fixnum :initial-element 0)
   :type (simple-array fixnum (*)))
  (recent-how (make-array +recent-closed-count+ :initial-element nil) :type simple-vector)
  (recent-next 0 :type fixnum)
  ;; ---- our settings (what we advertise and enforce)
  (local-max-frame-size +default-max-frame-size+ :type fixnum)
  (local-initial-window 1048576 :type fixnum)
  (local-max-concurrent nil :type (or null fixnum))
  (local-max-header-list-size 65536 :type fixnum)
  (local-connection-window 4194304 :type fixnum)
  (local-settings-acked nil)
  ;; ---- the peer's settings (what we obey); protocol defaults until its SETTINGS
  (peer-settings-seen nil)
  (peer-max-frame-size +default-max-frame-size+ :type fixnum)
  (peer-initial-window +default-window-size+ :type fixnum)
  (peer-max-concurrent nil :type (or null fixnum))
  (peer-max-header-list-size nil)
  ;; ---- connection flow control (6.9)
  (send-window +default-window-size+ :type fixnum)
  (recv-window +default-window-size+ :type fixnum)
  (recv-unacked 0 :type fixnum)
  ;; ---- CONTINUATION assembly (6.10)
  (cont-active nil)
  (cont-stream-id 0 :type fixnum)
  (cont-end-stream nil)
  (cont-pending-error nil)
  (cont-buf (make-obuf 1024) :type obuf)
  ;; ---- lifecycle
  (goaway-sent nil)
  (goaway-received nil)
  (peer-last-stream-id +max-window-size+ :type fixnum) ; from the peer's GOAWAY
  (closed nil)
  (close-code nil)                      ; error code we or the peer closed with
  (ping-acks 0 :type fixnum)            ; PING ACKs received, for CONNECTION-PING
  ;; ---- application callbacks (all called with LOCK held, on the reader
  ;; thread unless noted)
  ;; (conn stream headers end-stream): a header block on STREAM; on a server
  ;; a stream whose USER is NIL is a new request.
  (on-headers nil :type (or null function))
  ;; (conn stream octets start end end-stream): DATA payload OCTETS[START,END),
  ;; valid only during the call.
  (on-data nil :type (or null function))
  ;; (conn stream error-code origin): the stream ended abnormally.  ORIGIN is
  ;; :PEER (RST_STREAM received), :LOCAL (a stream error we detected and
  ;; answered with RST_STREAM), :GOAWAY (not processed by the peer) or
  ;; :CONNECTION (connection closed; any thread).
  (on-reset nil :type (or null function))
  ;; (conn): the connection closed (any thread).
  (on-close nil :type (or null function))
  (user nil))

(defun make-connection (socket role &key on-headers on-data on-reset on-close user
                                      (max-concurrent-streams (if (eq role :server) 1000 nil))
                                      (initial-window-size 1048576)
                                      (connection-window-size 4194304)
                                      (max-frame-size +default-max-frame-size+)
                                      (max-header-list-size 65536)
                                      reader-wrapper)
  "A connection over the connected SOCKET as ROLE (:CLIENT or :SERVER).
Nothing is sent or read until CONNECTION-START.  READER-WRAPPER, if given, is
called with a thunk in the reader thread and must call it: the place to bind
per-thread specials for work deferred to the reader."
  (check-type role (member :client :server))
  (validate-setting +settings-initial-window-size+ initial-window-size)
  (validate-setting +settings-max-frame-size+ max-frame-size)
  (%make-connection :role role :socket socket
                    :fd (if socket (clgrpc.net:socket-fd socket) -1)
                    :next-stream-id (if (eq role :client) 1 2)
                    :on-headers on-headers :on-data on-data :on-reset on-reset
                    :on-close on-close :user user :reader-wrapper reader-wrapper
                    :local-max-concurrent max-concurrent-streams
                    :local-initial-window initial-window-size
                    :local-connection-window (max connection-window-size +default-window-size+)
                    :local-max-frame-size max-frame-size
                    :local-max-header-list-size max-header-list-size))

(defmacro with-connection-lock ((conn) &body body)
  `(sb-thread:with-mutex ((conn-lock ,conn))
     ,@body))

;;; Public readers under the names the package exports.
(defun connection-role (conn) (conn-role conn))
(defun connection-user (conn) (conn-user conn))
(defun (setf connection-user) (value conn) (setf (conn-user conn) value))
(defun connection-lock (conn) (conn-lock conn))
(defun connection-closed-p (conn) (conn-closed conn))
(defun connection-goaway-received-p (conn) (conn-goaway-received conn))
(defun connection-goaway-sent-p (conn) (conn-goaway-sent conn))
(defun connection-stream-count (conn) (hash-table-count (conn-streams conn)))
(defun connection-peer-max-concurrent-streams (conn) (conn-peer-max-concurrent conn))
(defun connection-peer-max-frame-size (conn) (conn-peer-max-frame-size conn))
(defun connection-send-window (conn) (conn-send-window conn))
(defun reader-thread-p (conn)
  "True on CONN's reader thread."
  (eq sb-thread:*current-thread* (conn-reader-thread conn)))

(defun %defer-to-reader (conn function argument)
  "Reader thread, lock held: call (FUNCTION ARGUMENT) on this thread once it
has processed the frames it has read and released the lock, before it
writes what they produced and reads again."
  (push argument (conn-deferred conn))
  (push function (conn-deferred conn))
  nil)

;;; ------------------------------------------------------------------
;;; Stream identifiers (5.1.1)

(declaim (inline peer-initiated-p))
(defun peer-initiated-p (conn id)
  "Clients open odd streams, servers even ones."
  (declare (type fixnum id))
  (if (eq (conn-role conn) :server) (oddp id) (evenp id)))

(defun %stream-idle-p (conn id)
  "True if stream ID was never opened: above every identifier the peer (for
its streams) or we (for ours) have used."
  (declare (type fixnum id))
  (if (peer-initiated-p conn id)
      (> id (conn-max-remote-id conn))
      (>= id (conn-next-stream-id conn))))

(defun %remember-closed (conn id how)
  (let ((i (conn-recent-next conn)))
    (setf (aref (conn-recent-ids conn) i) id
          (svref (conn-recent-how conn) i) how
          (conn-recent-next conn) (if (= (1+ i) +recent-closed-count+) 0 (1+ i)))))

(defun %recently-closed (conn id)
  "How stream ID was closed (:RESET-SENT, :RESET-RECEIVED or :ENDED) if it
is among the last streams closed, else NIL."
  (let ((ids (conn-recent-ids conn)))
    (dotimes (i +recent-closed-count+ nil)
      (when (= (aref ids i) id)
        (return (svref (conn-recent-how conn) i))))))

(defun %close-stream (conn stream how)
  "Move STREAM to closed and forget it; wakes anyone waiting on its window
or for a free stream slot."
  (declare (type h2-stream stream))
  (unless (eq (h2-stream-state stream) :closed)
    (setf (h2-stream-state stream) :closed)
    (let ((id (h2-stream-id stream)))
      (when (plusp id)
        (when (remhash id (conn-streams conn))
          (if (peer-initiated-p conn id)
              (decf (conn-active-remote conn))
              (decf (conn-active-local conn))))
        (%remember-closed conn id how)))
    (when (and (conn-goaway-received conn)
               (zerop (hash-table-count (conn-streams conn)))
               (>= (conn-fd conn) 0)
               (not (eq sb-thread:*current-thread* (conn-reader-thread conn))))
      ;; The peer said goodbye and nothing is left: wake the reader, which
      ;; flushes and closes (the reader checks this itself after each read).
      (clgrpc.net:fd-shutdown (conn-fd conn) :input))
    (clgrpc.util:broadcast-if-waiting (conn-window-waiters conn) (conn-window-cv conn))))

(defun %stream-end-remote (conn stream)
  "The peer sent END_STREAM."
  (ecase (h2-stream-state stream)
    (:open (setf (h2-stream-state stream) :half-closed-remote))
    (:half-closed-local (%close-stream conn stream :ended))))

(defun %stream-end-local (conn stream)
  "We sent END_STREAM."
  (ecase (h2-stream-state stream)
    (:open (setf (h2-stream-state stream) :half-closed-local))
    (:half-closed-remote (%close-stream conn stream :ended))))

;;; Defined in later files; declared so each file compiles alone without
;;; undefined-function warnings.
(declaim (ftype function connection-close %request-flush))
