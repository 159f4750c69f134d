;;;; HTTP/2 over TLS: the reactor's read side of a connection that has a
;;;; clgrpc.tls session (the write side is %WRITE-SOME and
;;;; %HANDSHAKE-WRITE-OUT in output.lisp).
;;;;
;;;; Per readable event the reactor reads the socket once, as for plaintext,
;;;; into its ciphertext buffer, and feeds that to the session.  Until the
;;;; handshake is complete that only advances the handshake, whose replies
;;;; are written at once; frames already queued (our SETTINGS) wait in OUT.
;;;; Then it decrypts everything the read made available and processes it
;;;; frame by frame, as the plaintext path does: nothing decrypted is left
;;;; inside OpenSSL, which epoll could not tell about.
;;;;
;;;; A stalled handshake costs no thread and ends at the connection's
;;;; handshake timeout, as a stalled preface does (reactor.lisp, SWEEP).  A
;;;; failed one, or a server handshake that ends without ALPN "h2", closes
;;;; the connection after the TLS alert, if OpenSSL made one, is sent.

(in-package #:clgrpc.http2)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +cipher-read-size+ 65536
  "Ciphertext read per event: the most one read can make a connection
decrypt and process before the reactor serves the next.")

(defvar *log-tls-failures* t
  "Log why a TLS handshake or session failed (a refused client certificate,
a client that offers no h2, a peer that is not speaking TLS), at most
+TLS-LOG-LINES-PER-SECOND+ lines a second.")

(defconstant +tls-log-lines-per-second+ 10
  "A scanner or a flood of bad handshakes gets this many lines a second;
the rest are counted and the count is logged with the next line.")

(defvar *tls-log-lock* (sb-thread:make-mutex :name "tls failure log"))
(defvar *tls-log-second* 0)
(defvar *tls-log-lines* 0)
(defvar *tls-log-dropped* 0)
(declaim (type fixnum *tls-log-second* *tls-log-lines* *tls-log-dropped*))

(defun %log-tls-failure (fd why)
  ;; Under the lock, writing too: reactors log at once under a flood, and a
  ;; stream is not safe for two threads.
  (sb-thread:with-mutex (*tls-log-lock*)
    (let ((second (floor (clgrpc.util:now-us) 1000000)))
      (unless (= second *tls-log-second*)
        (setf *tls-log-second* second *tls-log-lines* 0))
      (if (>= *tls-log-lines* +tls-log-lines-per-second+)
          (incf *tls-log-dropped*)
          (progn
            (incf *tls-log-lines*)
            (ignore-errors
             (format *error-output* "clgrpc: TLS connection on fd ~D closed: ~A~@[ (~D more not logged)~]~%"
                     fd why (and (plusp *tls-log-dropped*) (shiftf *tls-log-dropped* 0)))
             (finish-output *error-output*)))))))

(defun %cipher-buffer (reactor)
  (or (reactor-cipher reactor)
      (setf (reactor-cipher reactor) (make-octets +cipher-read-size+))))

(defun %tls-abandon (conn why)
  "Reactor: the TLS session failed or was refused.  The alert OpenSSL
queued, if any, goes out while the socket takes it; then the connection is
released."
  (setf (conn-close-reason conn) why)
  (when *log-tls-failures*
    (%log-tls-failure (conn-fd conn) why))
  (ignore-errors (clgrpc.tls:session-send-pending (conn-tls conn) (conn-fd conn)))
  (finish-connection conn +connect-error+))

(defun %tls-handshake-step (conn tls)
  "Reactor: advance the handshake with what was fed.  True once it is
complete (the connection then writes the frames that waited for it), NIL
while it goes on or after it failed."
  (let ((state (handler-case (clgrpc.tls:session-handshake tls)
                 (clgrpc.tls:tls-error (e)
                   (%tls-abandon conn (clgrpc.tls:tls-error-message e))
                   (return-from %tls-handshake-step nil)))))
    (cond ((eq state :want)
           (%write-out conn nil)
           nil)
          ((not (equal (clgrpc.tls:tls-session-alpn tls) "h2"))
           ;; A server reaches this when the client offered no ALPN at all
           ;; (one that offered others was refused in the handshake); a
           ;; client, when the server chose none.
           (%tls-abandon conn (if (eq (conn-role conn) :server)
                                  "the client did not offer ALPN h2"
                                  "the server did not select ALPN h2"))
           nil)
          (t
           (%write-out conn nil)
           t))))

(defun %read-tls (reactor conn)
  "Read once from CONN's socket, decrypt and process.  Returns true if
input was processed, NIL if there was none or the connection ended."
  (let* ((tls (conn-tls conn))
         (cipher (%cipher-buffer reactor))
         (n (clgrpc.net:fd-recv-some (conn-fd conn) cipher 0 (length cipher))))
    (cond ((eq n :again) (return-from %read-tls nil))
          ((or (null n) (eql n 0))
           (finish-connection conn nil)
           (return-from %read-tls nil)))
    (setf (conn-last-read-us conn) (clgrpc.util:now-us))
    (clgrpc.tls:session-feed tls cipher 0 n)
    (unless (or (clgrpc.tls:tls-session-established tls)
                (%tls-handshake-step conn tls))
      (return-from %read-tls nil))
    (loop
      (multiple-value-bind (buf fill) (%with-carry reactor conn)
        (declare (type octets buf) (type fixnum fill))
        (let ((got (handler-case (clgrpc.tls:session-read tls buf fill (length buf))
                     (clgrpc.tls:tls-error (e)
                       (%tls-abandon conn (clgrpc.tls:tls-error-message e))
                       (return-from %read-tls nil)))))
          (case got
            (:want (return))
            (:closed
             ;; close_notify: the peer sends nothing more.
             (finish-connection conn nil)
             (return-from %read-tls nil)))
          (%process-read conn buf (+ fill (the fixnum got)))
          (when (or (conn-linger-until conn) (conn-finished conn))
            (return)))))
    ;; Records OpenSSL made while reading (a key update's reply).
    (when (clgrpc.tls:session-output-pending-p tls)
      (%write-out conn nil))
    t))
