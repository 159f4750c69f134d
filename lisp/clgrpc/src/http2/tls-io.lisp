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
;;;; handshake timeout, as a stalled preface does (reactor-loop.lisp,
;;;; SWEEP).  A failed one, or a server handshake that ends without ALPN
;;;; "h2", closes the connection after the TLS alert, if OpenSSL made one,
;;;; is sent.

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
  (let ((dropped nil))
    (sb-thread:with-mutex (*tls-log-lock*)
      (let ((second (floor (clgrpc.util:now-us) 1000000)))
        (unless (= second *tls-log-second*)
          (setf *tls-log-second* second *tls-log-lines* 0))
        (if (>= *tls-log-lines* +tls-log-lines-per-second+)
            (progn (incf *tls-log-dropped*)
                   (return-from %log-tls-failure nil))
            (progn (incf *tls-log-lines*)
                   (setf dropped (shiftf *tls-log-dropped* 0))))))
    (clgrpc.util:log-line "TLS connection on fd ~D closed: ~A~@[ (~D more not logged)~]"
                          fd why (and (plusp dropped) dropped))))

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

;;; Handshakes run on workers, never on the reactor: a step can cost
;;; milliseconds of CPU (an RSA-4096 signature takes 5 to 10 ms), and a
;;; storm of them would hold every connection of the reactor.  While a step
;;; runs (HANDSHAKE-RUNNING) the reactor does not read the connection; the
;;; step posts +POST-HANDSHAKE+ when it ends, and the reactor carries on
;;; from its result (%HANDSHAKE-DONE).  The workers are a small executor of
;;; their own, one thread per CPU at most: handshakes compute, and more
;;; threads would not finish a storm sooner.

(defvar *handshake-executor* nil)
(defvar *handshake-executor-lock* (sb-thread:make-mutex :name "handshake executor"))

(defun %handshake-executor ()
  (or *handshake-executor*
      (sb-thread:with-mutex (*handshake-executor-lock*)
        (or *handshake-executor*
            (let ((cpus (clgrpc.util:usable-cpu-count)))
              (setf *handshake-executor*
                    (clgrpc.util:make-executor :name "tls handshake" :lanes (length *reactors*)
                                               :min-threads cpus :max-threads cpus :keep-idle cpus
                                               :cpus cpus)))))))

(defun ensure-handshake-executor ()
  "Make the handshake executor now, on a thread that may create threads
(a connection's start), not on a reactor."
  (%handshake-executor)
  nil)

(defun %handshake-step (conn)
  "Worker: advance CONN's handshake with what was fed, and tell its reactor.
A connection finished meanwhile left its session to this step to free."
  (let ((result (handler-case (clgrpc.tls:session-handshake (conn-tls conn))
                  (clgrpc.tls:tls-error (e) (clgrpc.tls:tls-error-message e)))))
    (when (with-connection-lock (conn)
            (setf (conn-handshake-result conn) result)
            ;; Released (FINISH-CONNECTION) while this step ran?
            (if (< (conn-fd conn) 0)
                (progn (setf (conn-handshake-running conn) nil) t)
                (progn (%post conn +post-handshake+) nil)))
      (clgrpc.tls:session-free (conn-tls conn)))))

(defun %start-handshake-step (conn)
  "Reactor: run the next handshake step on a worker; leave CONN out of
epoll until it ends (a hang-up would otherwise be reported on every wait)."
  (with-connection-lock (conn)
    (setf (conn-handshake-running conn) t)
    (when (conn-registered conn)
      (clgrpc.net:epoll-control (reactor-epfd (conn-reactor conn)) :delete (conn-fd conn) 0)))
  (clgrpc.util:executor-submit (%handshake-executor) (conn-lane conn) #'%handshake-step conn))

(defconstant +turn-records+ 256
  "TLS records one turn of a connection decrypts at most.  Each costs a
decryption and a pass through the frame reader whatever it holds, so a
peer that sends records of one octet each would otherwise buy 64 KiB / 23
of them, thousands, with every read.")

(defun %tls-drain (reactor conn)
  "Reactor: decrypt what the session holds and process it frame by frame,
within the turn's budget.  Returns true if input was processed, NIL if the
connection ended."
  (let ((tls (conn-tls conn))
        (records +turn-records+))
    (declare (type fixnum records))
    (loop
      (when (<= records 0)
        (setf (conn-input-pending conn) t))
      (when (conn-input-pending conn)
        ;; Out of budget: the rest stays inside OpenSSL, for the backlog turn.
        (return))
      (decf records)
      (multiple-value-bind (buf fill) (%with-carry reactor conn)
        (declare (type octets buf) (type fixnum fill))
        (let ((got (handler-case (clgrpc.tls:session-read tls buf fill (length buf))
                     (clgrpc.tls:tls-error (e)
                       (%tls-abandon conn (clgrpc.tls:tls-error-message e))
                       (return-from %tls-drain nil)))))
          (case got
            (:want (return))
            (:closed
             ;; close_notify: the peer sends nothing more.
             (finish-connection conn nil)
             (return-from %tls-drain nil)))
          (%process-read conn buf (+ fill (the fixnum got)))
          (when (or (conn-linger-until conn) (conn-finished conn))
            (return)))))
    ;; Records OpenSSL made while reading (a key update's reply).
    (when (clgrpc.tls:session-output-pending-p tls)
      (%write-out conn nil))
    t))

(defun %tls-backlog-turn (reactor conn)
  "Reactor: a turn over what an earlier turn left: the frames in the carry,
then what the session still holds decrypted.  With no carry, the last turn
ran out of records, not frames: the session holds the rest."
  (if (conn-carry conn)
      (%carry-turn conn)
      (setf (conn-input-pending conn) nil))
  (%tls-drain reactor conn))

(defun %handshake-done (reactor conn)
  "Reactor: a handshake step ended on a worker.  Its result is :WANT (its
messages go out, and the reactor reads the peer's next flight), :DONE, or
why it failed."
  (let ((result (with-connection-lock (conn)
                  (setf (conn-handshake-running conn) nil)
                  (when (and (conn-registered conn) (not (conn-closed conn)))
                    (clgrpc.net:epoll-control (reactor-epfd (conn-reactor conn)) :add (conn-fd conn)
                                              (%interest conn)))
                  (shiftf (conn-handshake-result conn) nil)))
        (tls (conn-tls conn)))
    (cond ((< (conn-fd conn) 0)
           ;; Released while the step ran: its session is this thread's to free.
           (clgrpc.tls:session-free tls))
          ((null result))
          ((stringp result) (%tls-abandon conn result))
          ((eq result :want) (%write-out conn nil))
          ((not (equal (clgrpc.tls:tls-session-alpn tls) "h2"))
           ;; A server reaches this when the client offered no ALPN at all
           ;; (one that offered others was refused in the handshake); a
           ;; client, when the server chose none.
           (%tls-abandon conn (if (eq (conn-role conn) :server)
                                  "the client did not offer ALPN h2"
                                  "the server did not select ALPN h2")))
          (t
           ;; The frames that waited for the handshake go; the peer's first
           ;; frames may have come with its last flight.
           (%write-out conn nil)
           (%begin-turn conn)
           (when (%tls-drain reactor conn)
             (%end-turn reactor conn))))))

(defun %read-tls (reactor conn)
  "Read once from CONN's socket, then decrypt and process, or hand the
handshake its next step.  Returns true if input was processed, NIL if there
was none, the handshake goes on, or the connection ended."
  (let* ((tls (conn-tls conn))
         (cipher (%cipher-buffer reactor))
         (n (clgrpc.net:fd-recv-some (conn-fd conn) cipher 0 (length cipher))))
    (cond ((eq n :again) (return-from %read-tls nil))
          ((or (null n) (eql n 0))
           (finish-connection conn nil)
           (return-from %read-tls nil)))
    (setf (conn-last-read-us conn) (clgrpc.util:now-us))
    (clgrpc.tls:session-feed tls cipher 0 n)
    (if (clgrpc.tls:tls-session-established tls)
        (%tls-drain reactor conn)
        (progn (%start-handshake-step conn)
               nil))))
