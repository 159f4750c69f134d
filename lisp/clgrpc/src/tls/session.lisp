;;;; TLS sessions over memory BIOs: OpenSSL never touches a socket.
;;;;
;;;; The connection layer reads ciphertext from the socket itself, feeds it
;;;; in (SESSION-FEED) and takes plaintext out (SESSION-READ); what it sends
;;;; is encrypted into the write BIO (SESSION-WRITE-SOME) and written to the
;;;; socket from there without blocking.  So a handshake or a slow peer
;;;; costs no thread: the reactor drives each session as far as the bytes at
;;;; hand allow and returns, as it does for plaintext.
;;;;
;;;; An SSL object is not safe for use by two threads at once, and here the
;;;; reactor reads while any thread may write: every call on a session holds
;;;; its LOCK, which is a leaf (nothing else is locked under it) and is held
;;;; only for non-blocking work.
;;;;
;;;; Ciphertext waiting for the socket stays in the write BIO, and a write
;;;; encrypts more only once the BIO is empty, so a session holds at most one
;;;; chunk (+ENCRYPT-CHUNK+) of unsent ciphertext beyond what OpenSSL
;;;; itself produced while reading (handshake and key-update replies).

(in-package #:clgrpc.tls)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +encrypt-chunk+ 65536
  "Plaintext encrypted per write: four full TLS records.")

(defconstant +bio-ctrl-reset+ 1)
(defconstant +bio-ctrl-info+ 3)
(defconstant +bio-c-get-buf-mem-ptr+ 115)
(defconstant +bio-c-set-buf-mem-eof-return+ 130)

(defconstant +idle-bio-capacity+ 16384
  "An empty BIO holding more memory than this is replaced by a fresh one
when its connection goes idle (SESSION-TRIM): a memory BIO keeps its peak
size, so a connection that once moved a large message would hold it.")

(defstruct (tls-session (:constructor %make-tls-session (ssl rbio wbio role)))
  (ssl nil :type (or null sb-sys:system-area-pointer))
  (rbio nil :type (or null sb-sys:system-area-pointer))
  (wbio nil :type (or null sb-sys:system-area-pointer))
  (role :server :type (member :server :client))
  (lock (sb-thread:make-mutex :name "tls session") :type sb-thread:mutex)
  (established nil)
  ;; After the handshake: the negotiated protocol version and ALPN protocol,
  ;; and the peer's certificate subject and subject alternative names
  ;; (NIL and () without a verified certificate).
  (version nil)
  (alpn nil)
  (peer-subject nil)
  (peer-names '() :type list)
  ;; When ciphertext last went in or out, and whether the BIOs were trimmed
  ;; since (SESSION-TRIM).
  (active-us 0 :type fixnum)
  (trimmed nil))

(defmacro with-session ((session) &body body)
  "Run BODY holding SESSION's lock, safe from interrupts: an unwind out of
OpenSSL's frames (a timeout, a terminated thread) would leave the SSL object
inconsistent."
  `(sb-thread:with-mutex ((tls-session-lock ,session))
     (sb-sys:without-interrupts
       ,@body)))

(defun %bio-ctrl (bio command larg parg)
  (declare (type sb-sys:system-area-pointer bio parg) (type fixnum command larg))
  (openssl-call "BIO_ctrl" sb-alien:long
                (sb-sys:system-area-pointer sb-alien:int sb-alien:long sb-sys:system-area-pointer)
                bio command larg parg))

(defun %free-bio (bio) (openssl-call "BIO_free" sb-alien:int (sb-sys:system-area-pointer) bio))

(defun %new-memory-bio ()
  (let ((bio (openssl-call "BIO_new" sb-sys:system-area-pointer (sb-sys:system-area-pointer)
                           (openssl-call "BIO_s_mem" sb-sys:system-area-pointer ()))))
    (when (zerop (sb-sys:sap-int bio))
      (tls-fail "BIO_new failed"))
    ;; Empty means "retry later" to OpenSSL, not end of file.
    (%bio-ctrl bio +bio-c-set-buf-mem-eof-return+ -1 (sb-sys:int-sap 0))
    bio))

(defun %ip-address (name)
  "NAME as an IP address literal OpenSSL can match (brackets of \"[::1]\"
removed), or NIL for a DNS name."
  (let ((bare (string-trim "[]" name)))
    (and (plusp (length bare))
         (or (every (lambda (c) (or (digit-char-p c) (char= c #\.))) bare)
             (find #\: bare))
         bare)))

(defun %free-ssl (ssl) (openssl-call "SSL_free" sb-alien:void (sb-sys:system-area-pointer) ssl))

(defun %verify-server-name (ssl server-name)
  "A client checks the server's certificate against SERVER-NAME (DNS name,
no partial wildcards such as f*.example.com, or IP address) and sends it as
SNI."
  (let ((param (openssl-call "SSL_get0_param" sb-sys:system-area-pointer
                             (sb-sys:system-area-pointer) ssl))
        (ip (%ip-address server-name)))
    (if ip
        (when (/= 1 (openssl-call "X509_VERIFY_PARAM_set1_ip_asc" sb-alien:int
                                  (sb-sys:system-area-pointer sb-alien:c-string) param ip))
          (tls-fail "bad server address ~S" server-name))
        (progn
          (openssl-call "SSL_set_hostflags" sb-alien:void (sb-sys:system-area-pointer sb-alien:unsigned-int)
                        ssl +x509-check-flag-no-partial-wildcards+)
          (when (or (zerop (length server-name))
                    (/= 1 (openssl-call "SSL_set1_host" sb-alien:int
                                        (sb-sys:system-area-pointer sb-alien:c-string) ssl server-name)))
            (tls-fail "bad server name ~S" server-name))
          (openssl-call "SSL_ctrl" sb-alien:long
                        (sb-sys:system-area-pointer sb-alien:int sb-alien:long sb-alien:c-string)
                        ssl +ssl-ctrl-set-tlsext-hostname+ +tlsext-nametype-host-name+ server-name)))))

(defun make-tls-session (context &key server-name)
  "A session of CONTEXT's role.  A client's SERVER-NAME is sent as SNI and
is what the server's certificate must name (a DNS name or an IP address).
Signals TLS-ERROR, having released what it made, if that fails."
  (declare (optimize (speed 1)))
  (ensure-openssl)
  (clear-errors)
  (let ((ssl (openssl-call "SSL_new" sb-sys:system-area-pointer (sb-sys:system-area-pointer)
                           (tls-context-pointer context)))
        (role (tls-context-role context)))
    (when (zerop (sb-sys:sap-int ssl))
      (tls-fail "SSL_new failed"))
    (handler-bind ((error (lambda (e) (declare (ignore e)) (%free-ssl ssl))))
      (let* ((rbio (%new-memory-bio))
             (wbio (handler-bind ((error (lambda (e) (declare (ignore e)) (%free-bio rbio))))
                     (%new-memory-bio))))
        ;; The SSL object owns both BIOs from here on: SSL_free frees them.
        (openssl-call "SSL_set_bio" sb-alien:void
                      (sb-sys:system-area-pointer sb-sys:system-area-pointer sb-sys:system-area-pointer)
                      ssl rbio wbio)
        (if (eq role :server)
            (openssl-call "SSL_set_accept_state" sb-alien:void (sb-sys:system-area-pointer) ssl)
            (progn
              (openssl-call "SSL_set_connect_state" sb-alien:void (sb-sys:system-area-pointer) ssl)
              (when server-name
                (%verify-server-name ssl server-name))))
        (%make-tls-session ssl rbio wbio role)))))

(defun session-close-notify (session fd)
  "An established SESSION ends cleanly: queue close_notify and write it to
FD if the socket takes it now.  Marks the session as shut down, so that
OpenSSL keeps it in the server's cache for resumption by session id."
  (with-session (session)
    (let ((ssl (tls-session-ssl session)))
      (when (and ssl (tls-session-established session))
        (clear-errors)
        (openssl-call "SSL_shutdown" sb-alien:int (sb-sys:system-area-pointer) ssl)
        (clear-errors)
        (%send-pending session fd))))
  nil)

(defun session-free (session)
  "Release SESSION's OpenSSL state; later calls find it closed."
  (with-session (session)
    (let ((ssl (tls-session-ssl session)))
      (when ssl
        (setf (tls-session-ssl session) nil
              (tls-session-rbio session) nil
              (tls-session-wbio session) nil)
        (%free-ssl ssl))))
  nil)

(defun %closed ()
  (error 'tls-error :message "the TLS session is closed"))

;;; ------------------------------------------------------------------
;;; Input

(defun session-feed (session octets start end)
  "Hand OCTETS[START,END), ciphertext read from the peer, to SESSION."
  (declare (type octets octets) (type fixnum start end))
  (with-session (session)
    (setf (tls-session-active-us session) (clgrpc.util:now-us)
          (tls-session-trimmed session) nil)
    (let ((rbio (or (tls-session-rbio session) (%closed))))
      (unless (= (the fixnum (sb-sys:with-pinned-objects (octets)
                               (openssl-call "BIO_write" sb-alien:int
                                             (sb-sys:system-area-pointer sb-sys:system-area-pointer sb-alien:int)
                                             rbio (sb-sys:sap+ (sb-sys:vector-sap octets) start) (- end start))))
                 (- end start))
        (tls-fail "out of memory for TLS input"))))
  nil)

(defun %bio-capacity (bio)
  "The memory a memory BIO holds (its BUF_MEM's max)."
  (declare (type sb-sys:system-area-pointer bio))
  (let ((cell (make-array 1 :element-type '(unsigned-byte 64) :initial-element 0)))
    (declare (dynamic-extent cell))
    (sb-sys:with-pinned-objects (cell)
      (%bio-ctrl bio +bio-c-get-buf-mem-ptr+ 0 (sb-sys:vector-sap cell))
      (let ((buf-mem (sb-sys:int-sap (aref cell 0))))
        ;; struct buf_mem_st { size_t length; char *data; size_t max; ... }
        (if (zerop (sb-sys:sap-int buf-mem)) 0 (sb-sys:sap-ref-64 buf-mem 16))))))

(defun %renew-wbio (session)
  "Lock held, write BIO empty: replace it by a fresh one (SSL_set0_wbio
frees the old); if none can be made, keep the old one, emptied.  Never
signals: writers call it."
  (let ((fresh (ignore-errors (%new-memory-bio))))
    (if fresh
        (progn
          (openssl-call "SSL_set0_wbio" sb-alien:void (sb-sys:system-area-pointer sb-sys:system-area-pointer)
                        (tls-session-ssl session) fresh)
          (setf (tls-session-wbio session) fresh))
        (%bio-ctrl (tls-session-wbio session) +bio-ctrl-reset+ 0 (sb-sys:int-sap 0)))))

(defun session-idle-since (session)
  "When ciphertext last went in or out (clgrpc.util:now-us time), or NIL if
the session's buffers were trimmed since: what SESSION-TRIM is due on."
  (and (not (tls-session-trimmed session)) (tls-session-active-us session)))

(defun session-trim (session)
  "Give back what SESSION's BIOs hold beyond +IDLE-BIO-CAPACITY+ while they
are empty: once per idle period of a connection (SESSION-IDLE-SINCE)."
  (with-session (session)
    (let ((ssl (tls-session-ssl session)))
      (setf (tls-session-trimmed session) t)
      (when ssl
        (let ((rbio (tls-session-rbio session))
              (wbio (tls-session-wbio session)))
          (when (and (> (the fixnum (%bio-capacity rbio)) +idle-bio-capacity+)
                     (zerop (the fixnum (nth-value 1 (%pending-octets rbio)))))
            (let ((fresh (ignore-errors (%new-memory-bio))))
              (when fresh
                (openssl-call "SSL_set0_rbio" sb-alien:void (sb-sys:system-area-pointer sb-sys:system-area-pointer)
                              ssl fresh)
                (setf (tls-session-rbio session) fresh))))
          (when (and (> (the fixnum (%bio-capacity wbio)) +idle-bio-capacity+)
                     (zerop (the fixnum (nth-value 1 (%pending-octets wbio)))))
            (%renew-wbio session))))))
  nil)

(defun %ssl-error (ssl result)
  (openssl-call "SSL_get_error" sb-alien:int (sb-sys:system-area-pointer sb-alien:int) ssl result))

(defun %verify-failure (ssl)
  "Why the peer's certificate was refused, if it was."
  (let ((result (openssl-call "SSL_get_verify_result" sb-alien:long (sb-sys:system-area-pointer) ssl)))
    (unless (= result +x509-v-ok+)
      (openssl-call "X509_verify_cert_error_string" sb-alien:c-string (sb-alien:long) result))))

(defun session-handshake (session)
  "Advance SESSION's handshake with the input fed so far: :DONE once it is
complete (then the handshake's last flight may wait in the write BIO), or
:WANT for more input.  Signals TLS-ERROR if it failed; the alert for the
peer, if any, is in the write BIO."
  (declare (optimize (speed 1)))
  (with-session (session)
    (let ((ssl (or (tls-session-ssl session) (%closed))))
      (clear-errors)
      (let ((result (openssl-call "SSL_do_handshake" sb-alien:int (sb-sys:system-area-pointer) ssl)))
        (if (= result 1)
            (progn (%note-established session ssl) :done)
            (let ((code (%ssl-error ssl result)))
              (if (or (= code +ssl-error-want-read+) (= code +ssl-error-want-write+))
                  :want
                  (let ((verify (%verify-failure ssl)))
                    (tls-fail "TLS handshake failed~@[ (certificate: ~A)~]" verify)))))))))

(defun session-read (session buffer start end)
  "Decrypt into BUFFER[START,END): the octet count, :WANT when the input fed
so far holds no more plaintext, or :CLOSED once the peer sent close_notify.
Signals TLS-ERROR on a protocol error."
  (declare (type octets buffer) (type fixnum start end))
  (with-session (session)
    (let ((ssl (or (tls-session-ssl session) (%closed))))
      (clear-errors)
      (let ((n (sb-sys:with-pinned-objects (buffer)
                 (openssl-call "SSL_read" sb-alien:int
                               (sb-sys:system-area-pointer sb-sys:system-area-pointer sb-alien:int)
                               ssl (sb-sys:sap+ (sb-sys:vector-sap buffer) start) (- end start)))))
        (declare (type fixnum n))
        (if (plusp n)
            n
            (let ((code (%ssl-error ssl n)))
              (cond ((or (= code +ssl-error-want-read+) (= code +ssl-error-want-write+)) :want)
                    ((= code +ssl-error-zero-return+) :closed)
                    (t (tls-fail "TLS read failed")))))))))

;;; ------------------------------------------------------------------
;;; Output

(defun %pending-octets (wbio)
  "The unsent ciphertext in WBIO: (values sap length)."
  (declare (type sb-sys:system-area-pointer wbio))
  (let ((cell (make-array 1 :element-type '(unsigned-byte 64) :initial-element 0)))
    (declare (dynamic-extent cell))
    (sb-sys:with-pinned-objects (cell)
      (let ((length (%bio-ctrl wbio +bio-ctrl-info+ 0 (sb-sys:vector-sap cell))))
        (values (sb-sys:int-sap (aref cell 0)) length)))))

(defun %discard (wbio n)
  "Drop the first N octets of WBIO, which the socket took."
  (declare (type sb-sys:system-area-pointer wbio) (type fixnum n))
  (let ((scratch (make-array 4096 :element-type '(unsigned-byte 8))))
    (declare (dynamic-extent scratch))
    (sb-sys:with-pinned-objects (scratch)
      (loop while (plusp n)
            do (let ((got (openssl-call "BIO_read" sb-alien:int
                                        (sb-sys:system-area-pointer sb-sys:system-area-pointer sb-alien:int)
                                        wbio (sb-sys:vector-sap scratch) (min n 4096))))
                 (declare (type fixnum got))
                 (when (<= got 0) (return))
                 (decf n got))))))

(defun %send-pending (session fd)
  "Lock held: write the write BIO's ciphertext to FD without blocking.
:DONE when all of it went, :BLOCKED when the socket is full, NIL if the
connection failed."
  (let ((wbio (tls-session-wbio session)))
    (unless wbio
      (return-from %send-pending nil))
    (multiple-value-bind (sap length) (%pending-octets wbio)
      (declare (type fixnum length))
      (if (zerop length)
          :done
          (let ((n (clgrpc.net:fd-write-some-sap fd sap length)))
            (cond ((null n) nil)
                  ((= (the fixnum n) length)
                   ;; The common case: all of it went, and resetting the BIO
                   ;; drops it without a copy.  One that grew past a chunk
                   ;; (replies OpenSSL piled up while the peer did not read)
                   ;; is replaced instead, to give the memory back.
                   (if (> (the fixnum (%bio-capacity wbio)) (* 2 +encrypt-chunk+))
                       (%renew-wbio session)
                       (%bio-ctrl wbio +bio-ctrl-reset+ 0 (sb-sys:int-sap 0)))
                   :done)
                  (t (%discard wbio n) :blocked)))))))

(defun session-send-pending (session fd)
  "Write SESSION's pending ciphertext (handshake flights, alerts, replies
OpenSSL made while reading) to FD: :DONE, :BLOCKED or NIL, as %SEND-PENDING."
  (with-session (session)
    (%send-pending session fd)))

(defun session-pending-octets (session)
  "How much ciphertext waits in SESSION's write BIO."
  (with-session (session)
    (let ((wbio (tls-session-wbio session)))
      (if wbio (the fixnum (nth-value 1 (%pending-octets wbio))) 0))))

(defun session-output-pending-p (session)
  "True if ciphertext waits in SESSION's write BIO."
  (plusp (the fixnum (session-pending-octets session))))

(defun session-write-some (session fd buffer start end)
  "Encrypt what FD can take of BUFFER[START,END) and write it without
blocking.  Returns the plaintext octet count consumed and, second, whether
ciphertext is left for the socket (it is then full: wait until FD is
writable and call again, with the rest).  NIL if the connection failed."
  (declare (type octets buffer) (type fixnum start end))
  (with-session (session)
    (let ((ssl (tls-session-ssl session)))
      (unless ssl
        (return-from session-write-some nil))
      (case (%send-pending session fd)
        ((nil) (return-from session-write-some nil))
        (:blocked (return-from session-write-some (values 0 t))))
      (if (>= start end)
          (values 0 nil)
          (let ((n (min (- end start) +encrypt-chunk+)))
            (declare (type fixnum n))
            (setf (tls-session-active-us session) (clgrpc.util:now-us)
                  (tls-session-trimmed session) nil)
            (clear-errors)
            (let ((written (sb-sys:with-pinned-objects (buffer)
                             (openssl-call "SSL_write" sb-alien:int
                                           (sb-sys:system-area-pointer sb-sys:system-area-pointer sb-alien:int)
                                           ssl (sb-sys:sap+ (sb-sys:vector-sap buffer) start) n))))
              (declare (type fixnum written))
              (unless (= written n)
                ;; A memory BIO takes any amount: only a broken session
                ;; refuses.
                (return-from session-write-some nil))
              (let ((sent (%send-pending session fd)))
                (if sent
                    (values n (eq sent :blocked))
                    nil))))))))

;;; ------------------------------------------------------------------
;;; After the handshake: what was negotiated, and who the peer is

(defun %note-established (session ssl)
  (declare (optimize (speed 1)))
  (setf (tls-session-established session) t
        (tls-session-version session)
        (openssl-call "SSL_get_version" sb-alien:c-string (sb-sys:system-area-pointer) ssl)
        (tls-session-alpn session) (%selected-alpn ssl))
  (multiple-value-bind (subject names) (%peer-identity ssl)
    (setf (tls-session-peer-subject session) subject
          (tls-session-peer-names session) names)))

(defun %selected-alpn (ssl)
  (let ((cells (make-array 2 :element-type '(unsigned-byte 64) :initial-element 0)))
    (sb-sys:with-pinned-objects (cells)
      (let ((sap (sb-sys:vector-sap cells)))
        (openssl-call "SSL_get0_alpn_selected" sb-alien:void
                      (sb-sys:system-area-pointer sb-sys:system-area-pointer sb-sys:system-area-pointer)
                      ssl sap (sb-sys:sap+ sap 8))
        (let ((data (sb-sys:int-sap (aref cells 0)))
              (length (ldb (byte 32 0) (aref cells 1))))
          (and (plusp (sb-sys:sap-int data)) (plusp length)
               (map 'string (lambda (i) (code-char (sb-sys:sap-ref-8 data i)))
                    (loop for i below length collect i))))))))
