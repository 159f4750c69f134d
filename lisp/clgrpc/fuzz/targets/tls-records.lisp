;;;; TLS records after the handshake (tls/session.lisp over OpenSSL): a
;;;; clgrpc client and server session complete a real handshake over memory
;;;; BIOs, the client encrypts the input's plaintext, and the server is fed
;;;; the records in pseudo-random chunks and reads what they decrypt to.
;;;;
;;;;   config (1) | seed (1) | plaintext ...
;;;;
;;;; CONFIG's low bits choose how the client writes the plaintext (one write,
;;;; or pieces of pseudo-random sizes, so that records of every size up to
;;;; 16 KiB occur) and how the ciphertext is cut when fed; bit 6 ends the
;;;; stream with close_notify; bit 7 flips one octet of the ciphertext (at a
;;;; place SEED picks).  Unlike the tls target, whose inputs stop at the
;;;; handshake, these records are authenticated and in sequence, so what
;;;; reaches the server's decryption and framing is a record it must accept,
;;;; or one tampered with that it must refuse.
;;;;
;;;; Checked: what the server reads is always a prefix of what was sent;
;;;; records not tampered with deliver all of it (and then :CLOSED after a
;;;; close_notify) without any error; a tampered stream fails with TLS-ERROR,
;;;; the documented rejection, or stops short.  Both sessions are freed.

(in-package #:clgrpc.fuzz)

(defun %take-pending (session)
  "The ciphertext waiting in SESSION's write BIO, removed from it."
  (let ((wbio (clgrpc.tls::tls-session-wbio session)))
    (multiple-value-bind (sap length) (clgrpc.tls::%pending-octets wbio)
      (let ((o (make-octets length)))
        (dotimes (i length)
          (setf (aref o i) (sb-sys:sap-ref-8 sap i)))
        (clgrpc.tls::%discard wbio length)
        o))))

(defun %pump (from to)
  (let ((o (%take-pending from)))
    (when (plusp (length o))
      (clgrpc.tls:session-feed to o 0 (length o)))))

(defun %handshake (client server)
  "Complete CLIENT's and SERVER's handshake, passing their flights across."
  (loop repeat 8
        for c = (clgrpc.tls:session-handshake client)
        do (%pump client server)
           (let ((s (clgrpc.tls:session-handshake server)))
             (%pump server client)
             (when (and (eq c :done) (eq s :done))
               (return-from %handshake))))
  (error "the sessions' handshake did not complete"))

(defun %client-write (session octets start end)
  "Encrypt OCTETS[START,END) on SESSION into its write BIO."
  (let ((ssl (clgrpc.tls::tls-session-ssl session)))
    (sb-sys:with-pinned-objects (octets)
      (let ((n (clgrpc.tls::openssl-call "SSL_write" sb-alien:int
                                          (sb-sys:system-area-pointer sb-sys:system-area-pointer sb-alien:int)
                                          ssl (sb-sys:sap+ (sb-sys:vector-sap octets) start) (- end start))))
        (unless (= n (- end start))
          (error "SSL_write took ~D of ~D octets" n (- end start)))))))

(defun %client-close (session)
  (clgrpc.tls::openssl-call "SSL_shutdown" sb-alien:int (sb-sys:system-area-pointer)
                            (clgrpc.tls::tls-session-ssl session)))

(defun %records-of (client plaintext random config)
  "The records CLIENT makes of PLAINTEXT, written in one piece or several."
  (let ((start 0) (end (length plaintext)))
    (loop while (< start end)
          do (let ((n (if (zerop (logand config 1))
                          (- end start)
                          (min (- end start) (1+ (funcall random 3000))))))
               (%client-write client plaintext start (+ start n))
               (incf start n))))
  (when (logbitp 6 config)
    (%client-close client))
  (%take-pending client))

(defun %server-reads (server records random config)
  "Feed SERVER the RECORDS in chunks and read what they decrypt to: the
plaintext octets, and whether the stream ended with close_notify."
  (let ((out (make-obuf 256))
        (buffer (make-octets 4096))
        (start 0)
        (closed nil))
    (loop while (< start (length records))
          do (let ((n (if (logbitp 1 config)
                          (min (- (length records) start) (1+ (funcall random 600)))
                          (- (length records) start))))
               (clgrpc.tls:session-feed server records start (+ start n))
               (incf start n)
               (loop (let ((got (clgrpc.tls:session-read server buffer 0 (length buffer))))
                       (case got
                         (:want (return))
                         (:closed (setf closed t) (return))
                         (t (obuf-write-bytes out buffer 0 got)))))))
    (values (obuf-contents out) closed)))

(defun seeded-random (seed)
  "A function of N giving pseudo-random integers below N, the same sequence
for the same SEED."
  (let ((state (logior 1 (* 2654435761 (1+ seed)))))
    (lambda (n)
      (setf state (mod (+ (* state 6364136223846793005) 1442695040888963407) (expt 2 64)))
      (mod (ash state -33) n))))

(defun tls-records-runner ()
  (let ((server-context (clgrpc.tls:make-server-context :cert-file (credential "server.pem")
                                                        :key-file (credential "server.key")))
        (client-context (clgrpc.tls:make-client-context :ca-file (credential "ca.pem"))))
    (lambda (octets)
      (when (>= (length octets) 2)
        (let* ((config (aref octets 0))
               (random (seeded-random (aref octets 1)))
               (plaintext (subseq octets 2))
               (tamper (logbitp 7 config))
               (client (clgrpc.tls:make-tls-session client-context :server-name "foo.test.google.fr"))
               (server (clgrpc.tls:make-tls-session server-context)))
          (unwind-protect
               (progn
                 (%handshake client server)
                 (let ((records (%records-of client plaintext random config)))
                   (when (and tamper (plusp (length records)))
                     (let ((i (mod (+ (* 251 (aref octets 1)) (length plaintext)) (length records))))
                       (setf (aref records i) (logxor (aref records i) (1+ (funcall random 255))))))
                   (multiple-value-bind (read closed)
                       (handler-bind ((clgrpc.tls:tls-error
                                        (lambda (e)
                                          (check tamper "untampered records refused: ~A" e))))
                         (%server-reads server records random config))
                     (check (and (<= (length read) (length plaintext))
                                 (equalp read (subseq plaintext 0 (length read))))
                            "the server read ~D octets that are not what was sent" (length read))
                     (unless tamper
                       (check (= (length read) (length plaintext))
                              "the server read ~D of ~D octets" (length read) (length plaintext))
                       (check (eq closed (logbitp 6 config))
                              "close_notify ~:[not seen~;seen~] though ~:[not~;~] sent"
                              closed (logbitp 6 config))))))
            (clgrpc.tls:session-free client)
            (clgrpc.tls:session-free server)))))))

(defun tls-records-seeds ()
  (let ((preface (octets-from "PRI * HTTP/2.0" 13 10 13 10 "SM" 13 10 13 10 0 0 0 4 0 0 0 0 0))
        (large (let ((o (make-octets 4000))) (fill o 97))))
    (list (cons "h2-preface" (concatenate 'octets (octets-from 0 1) preface))
          (cons "h2-preface-pieces-chunks" (concatenate 'octets (octets-from 3 7) preface))
          (cons "large-pieces-close" (concatenate 'octets (octets-from 67 9) large))
          (cons "large-tampered" (concatenate 'octets (octets-from 131 5) large))
          (cons "empty-close" (octets-from 64 0)))))

(define-target "tls-records"
  :files '((:clgrpc . "src/tls/session.lisp"))
  :runner #'tls-records-runner
  :expected '(clgrpc.tls:tls-error)
  :seeds #'tls-records-seeds
  :max-length 8192
  :outcome-feedback t
  :tokens (list (octets-from 64) (octets-from 128) (octets-from 195)))
