;;;; Test helpers for the connection layer: a raw HTTP/2 peer that writes
;;;; arbitrary (also malformed) bytes on a real TCP socket and reads back
;;;; decoded frames with timeouts, and a small echo server built on
;;;; CLGRPC.HTTP2 connections.

(in-package #:clgrpc.tests)

(defparameter *io-timeout* 5 "Seconds any single test read may wait.")

;;; ------------------------------------------------------------------
;;; Raw peer

(defstruct raw-peer
  socket
  (fd -1)
  (buf (make-octets 262144))
  (fill 0)
  (encoder (clgrpc.hpack:make-encoder))
  (decoder (clgrpc.hpack:make-decoder)))

(defun raw-connect (port)
  (let ((s (clgrpc.net:tcp-connect "127.0.0.1" port)))
    (make-raw-peer :socket s :fd (clgrpc.net:socket-fd s))))

(defun raw-connect-port (port)
  "A raw peer on PORT that has sent its preface."
  (let ((peer (raw-connect port)))
    (raw-preface peer)
    peer))

(defun raw-decode-headers (peer frame)
  "The header list of a HEADERS FRAME, decoded with PEER's HPACK state (so
frames must be decoded in the order they arrived)."
  (clgrpc.hpack:decode-header-block (raw-peer-decoder peer) (clgrpc.http2:frame-data frame)
                                    (clgrpc.http2:frame-data-start frame)
                                    (clgrpc.http2:frame-data-end frame)))

(defun raw-close (peer)
  (clgrpc.net:socket-close (raw-peer-socket peer)))

(defun raw-send (peer octets)
  (clgrpc.net:fd-write (raw-peer-fd peer) octets 0 (length octets)))

(defun raw-send-obuf (peer fn)
  "Call FN with a fresh OBUF and send what it wrote."
  (let ((b (make-obuf 256)))
    (funcall fn b)
    (raw-send peer (obuf-contents b))))

(defun raw-open-windows (peer)
  "Grant the server every window at once: the largest stream window in
SETTINGS and the largest connection window (a peer that means to read
everything, or nothing, later)."
  (raw-send-obuf peer (lambda (b)
                        (clgrpc.http2:write-settings-frame
                         b (list (cons clgrpc.http2:+settings-initial-window-size+ #x7fffffff)))
                        (clgrpc.http2:write-window-update-frame b 0 (- #x7fffffff 65535)))))

(defun raw-preface (peer &optional (settings '()))
  (raw-send-obuf peer (lambda (b)
                        (obuf-write-bytes b clgrpc.http2:+connection-preface+)
                        (clgrpc.http2:write-settings-frame b settings))))

(defun raw-read-frame (peer &optional (timeout *io-timeout*))
  "The next frame as a FRAME struct (its data copied), :EOF when the peer
closed, or :TIMEOUT."
  (let ((deadline (+ (get-internal-real-time) (* timeout internal-time-units-per-second))))
    (loop
      (let ((fill (raw-peer-fill peer)) (buf (raw-peer-buf peer)))
        (when (>= fill 9)
          (let ((len (clgrpc.octets:read-u24 buf 0)))
            (when (>= fill (+ 9 len))
              (let* ((copy (subseq buf 0 (+ 9 len)))
                     (frame (clgrpc.http2:decode-frame copy :max-frame-size 16777215)))
                (replace buf buf :start2 (+ 9 len) :end2 fill)
                (setf (raw-peer-fill peer) (- fill 9 len))
                (return frame)))))
        (let ((left (/ (- deadline (get-internal-real-time)) internal-time-units-per-second)))
          (when (or (<= left 0) (not (clgrpc.net:fd-wait-readable (raw-peer-fd peer) left)))
            (return :timeout)))
        (let ((n (clgrpc.net:fd-read (raw-peer-fd peer) buf fill (length buf))))
          (if (or (null n) (zerop n))
              (return :eof)
              (incf (raw-peer-fill peer) n)))))))

(defun raw-expect (peer predicate &optional (timeout *io-timeout*))
  "Read frames until one satisfies PREDICATE; returns it, or :EOF / :TIMEOUT.
Frames it skips are answered as a client would (SETTINGS ACK) or ignored."
  (loop
    (let ((f (raw-read-frame peer timeout)))
      (when (or (symbolp f) (funcall predicate f))
        (return f))
      (when (and (= (clgrpc.http2:frame-type f) clgrpc.http2:+frame-settings+)
                 (not (clgrpc.http2:frame-ack-p f)))
        (raw-send-obuf peer #'clgrpc.http2:write-settings-ack)))))

(defun frame-of-type (type &optional stream-id)
  (lambda (f) (and (= (clgrpc.http2:frame-type f) type)
                   (or (null stream-id) (= stream-id (clgrpc.http2:frame-stream-id f))))))

(defun raw-expect-goaway (peer)
  "The error name of the GOAWAY the server sends, :EOF or :TIMEOUT."
  (let ((f (raw-expect peer (frame-of-type clgrpc.http2:+frame-goaway+))))
    (if (symbolp f) f (clgrpc.http2:error-code-name (clgrpc.http2:frame-error-code f)))))

(defun raw-expect-rst (peer stream-id)
  (let ((f (raw-expect peer (frame-of-type clgrpc.http2:+frame-rst-stream+ stream-id))))
    (if (symbolp f) f (clgrpc.http2:error-code-name (clgrpc.http2:frame-error-code f)))))

(defun raw-expect-eof (peer)
  "After a GOAWAY the server must close: :EOF (not a hang)."
  (loop (let ((f (raw-read-frame peer)))
          (when (symbolp f) (return f)))))

(defparameter *h2-request-headers*
  '((":method" . "POST") (":scheme" . "http") (":path" . "/echo")
    (":authority" . "localhost") ("content-type" . "application/grpc")))

(defun raw-header-block (peer &optional (headers *h2-request-headers*))
  (let ((b (make-obuf 256)))
    (clgrpc.hpack:encode-header-block (raw-peer-encoder peer) b headers)
    (obuf-contents b)))

(defun raw-headers (peer stream-id &key (headers *h2-request-headers*) end-stream (end-headers t))
  (let ((block (raw-header-block peer headers)))
    (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-headers-frame
                                     b stream-id block :end-stream end-stream
                                                       :end-headers end-headers)))))

(defun raw-data (peer stream-id octets &key end-stream)
  (raw-send-obuf peer (lambda (b) (clgrpc.http2:write-data-frame b stream-id octets
                                                                 :end-stream end-stream))))

(defun raw-frame-bytes (length type flags stream-id &optional (payload (make-octets length)))
  "A frame with arbitrary header fields, for malformed input."
  (let ((b (make-obuf 64)))
    (clgrpc.http2::write-frame-header b length type flags stream-id)
    (obuf-write-bytes b payload)
    (obuf-contents b)))

;;; gRPC requests written raw, for tests that speak to a gRPC server.

(defun grpc-request-headers (path &optional extra)
  (append `((":method" . "POST") (":scheme" . "http") (":path" . ,path)
            (":authority" . "localhost") ("content-type" . "application/grpc")
            ("te" . "trailers"))
          extra))

(defun grpc-frame (message &key (flag 0))
  (let ((b (make-obuf 16)))
    (obuf-write-u8 b flag)
    (obuf-write-u32 b (length message))
    (obuf-write-bytes b message)
    (obuf-contents b)))

(defun raw-grpc-request (peer stream-id path message &key (end-stream t))
  "HEADERS for PATH, then MESSAGE as one gRPC message in DATA."
  (raw-headers peer stream-id :headers (grpc-request-headers path))
  (raw-data peer stream-id (grpc-frame message) :end-stream end-stream))

;;; ------------------------------------------------------------------
;;; Echo server on CLGRPC.HTTP2 connections: answers every request with
;;; :status 200 and, once the request ends, all its DATA echoed back.

(defstruct echo-server listener port thread (connections '()) (lock (sb-thread:make-mutex)))

(defun echo-on-headers (conn stream headers end-stream)
  (declare (ignore headers))
  (unless (clgrpc.http2:h2-stream-user stream)
    (setf (clgrpc.http2:h2-stream-user stream) (make-obuf 64))
    (clgrpc.http2:stream-write-headers conn stream '((":status" . "200"))))
  (when end-stream
    (echo-finish conn stream))
  (clgrpc.http2:request-flush conn))

(defun echo-finish (conn stream)
  (let ((body (clgrpc.http2:h2-stream-user stream)))
    (if (<= (obuf-length body) (clgrpc.http2::%stream-send-window conn stream))
        (clgrpc.http2:stream-write-data conn stream (obuf-data body) 0 (obuf-length body)
                                  :end-stream t)
        ;; Callbacks must not block (waiting for window would stop the
        ;; reader that receives WINDOW_UPDATE): send from another thread.
        (sb-thread:make-thread
         (lambda ()
           (clgrpc.http2:with-connection-lock (conn)
             (clgrpc.http2:stream-write-data conn stream (obuf-data body) 0 (obuf-length body)
                                       :end-stream t))
           (clgrpc.http2:flush-connection conn))
         :name "echo sender"))))

(defun echo-on-data (conn stream octets start end end-stream)
  (let ((body (clgrpc.http2:h2-stream-user stream)))
    (when body
      (obuf-write-bytes body octets start end)
      (clgrpc.http2:stream-return-window conn stream (- end start))
      (when end-stream
        (echo-finish conn stream)
        (clgrpc.http2:request-flush conn)))))

(defun start-echo-server (&rest connection-args)
  (let* ((listener (clgrpc.net:tcp-listen "127.0.0.1" 0))
         (server (make-echo-server :listener listener
                                   :port (clgrpc.net:socket-local-port listener))))
    (setf (echo-server-thread server)
          (sb-thread:make-thread
           (lambda ()
             (loop
               (let ((socket (clgrpc.net:tcp-accept listener)))
                 (unless socket (return))
                 (let ((conn (apply #'clgrpc.http2:make-connection socket :server
                                    :on-headers #'echo-on-headers :on-data #'echo-on-data
                                    :on-reset (lambda (&rest r) (declare (ignore r)))
                                    connection-args)))
                   (sb-thread:with-mutex ((echo-server-lock server))
                     (push conn (echo-server-connections server)))
                   (clgrpc.http2:connection-start conn)))))
           :name "echo accept"))
    server))

(defun stop-echo-server (server)
  (clgrpc.net:fd-shutdown (clgrpc.net:socket-fd (echo-server-listener server)) :both)
  (sb-thread:join-thread (echo-server-thread server) :default nil :timeout 5)
  (clgrpc.net:socket-close (echo-server-listener server))
  (dolist (c (echo-server-connections server))
    (clgrpc.http2:connection-close c)
    (clgrpc.http2:connection-wait-closed c 5)))

(defmacro with-echo-server ((var &rest args) &body body)
  `(let ((,var (start-echo-server ,@args)))
     (unwind-protect (progn ,@body)
       (stop-echo-server ,var))))

(defmacro with-raw-peer ((var server &key (preface t)) &body body)
  `(let ((,var (raw-connect (echo-server-port ,server))))
     (unwind-protect (progn ,@(when preface `((raw-preface ,var))) ,@body)
       (raw-close ,var))))

(defun stream-outcomes (peer ids &optional (timeout 10))
  "For each stream of IDS, its grpc-status once it ended, or the name of
the RST_STREAM that ended it, or :TIMEOUT."
  (let ((outcomes (make-hash-table)))
    (loop until (every (lambda (id) (gethash id outcomes)) ids)
          do (let ((f (raw-expect peer (lambda (f)
                                         (member (clgrpc.http2:frame-type f)
                                                 (list clgrpc.http2:+frame-headers+
                                                       clgrpc.http2:+frame-rst-stream+)))
                                  timeout)))
               (when (symbolp f) (return))
               (let ((id (clgrpc.http2:frame-stream-id f)))
                 (if (= (clgrpc.http2:frame-type f) clgrpc.http2:+frame-rst-stream+)
                     (unless (gethash id outcomes)
                       (setf (gethash id outcomes)
                             (clgrpc.http2:error-code-name (clgrpc.http2:frame-error-code f))))
                     (let ((status (header "grpc-status" (raw-decode-headers peer f))))
                       (when status (setf (gethash id outcomes) status)))))))
    (mapcar (lambda (id) (gethash id outcomes :timeout)) ids)))
