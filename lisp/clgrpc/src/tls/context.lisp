;;;; TLS contexts: the credentials and policy that every session of a server
;;;; or client shares (an SSL_CTX).
;;;;
;;;; Both roles speak TLS 1.2 and 1.3 with OpenSSL's default ciphers, and
;;;; nothing older; renegotiation is off.  ALPN: a server selects "h2" and
;;;; fails the handshake (no_application_protocol) when a client offers ALPN
;;;; without it, and a session that ends its handshake with no protocol
;;;; selected is refused by the connection (session.lisp); a client offers
;;;; only "h2".

(in-package #:clgrpc.tls)

(declaim (optimize (speed 1) (safety 1) (debug 1)))

(defstruct (tls-context (:constructor %make-tls-context (pointer role)))
  "An SSL_CTX and the role of the sessions made from it."
  (pointer nil :type (or null sb-sys:system-area-pointer))
  (role :server :type (member :server :client)))

(defconstant +h2-alpn-length+ 2)

(defun %select-h2 (out outlen in inlen)
  "ALPN selection: point OUT at \"h2\" in the client's length-prefixed list
of protocol names IN, or refuse the handshake."
  (declare (type sb-sys:system-area-pointer out outlen in) (type fixnum inlen))
  (let ((i 0))
    (declare (type fixnum i))
    (loop while (< i inlen)
          do (let ((n (sb-sys:sap-ref-8 in i)))
               (when (and (= n +h2-alpn-length+) (<= (+ i 1 n) inlen)
                          (= (sb-sys:sap-ref-8 in (+ i 1)) (char-code #\h))
                          (= (sb-sys:sap-ref-8 in (+ i 2)) (char-code #\2)))
                 (setf (sb-sys:sap-ref-sap out 0) (sb-sys:sap+ in (1+ i))
                       (sb-sys:sap-ref-8 outlen 0) n)
                 (return-from %select-h2 +ssl-tlsext-err-ok+))
               (incf i (1+ n))))
    +ssl-tlsext-err-alert-fatal+))

(sb-alien:define-alien-callable select-h2 sb-alien:int
    ((ssl sb-sys:system-area-pointer) (out sb-sys:system-area-pointer)
     (outlen sb-sys:system-area-pointer) (in sb-sys:system-area-pointer)
     (inlen sb-alien:unsigned-int) (arg sb-sys:system-area-pointer))
  (declare (ignore ssl arg))
  (%select-h2 out outlen in inlen))

(sb-alien:define-alien-callable no-passphrase sb-alien:int
    ((buf sb-sys:system-area-pointer) (size sb-alien:int) (rwflag sb-alien:int)
     (userdata sb-sys:system-area-pointer))
  ;; An encrypted key file fails to load instead of OpenSSL prompting on the
  ;; terminal.
  (declare (ignore buf size rwflag userdata))
  0)

(defparameter *http2-tls12-ciphers* "ECDHE+AESGCM:ECDHE+CHACHA20"
  "TLS 1.2 suites: ephemeral key exchange and AEAD only, as RFC 9113 9.2.2
requires of HTTP/2 (TLS 1.3's suites all qualify).")

(defparameter *session-id-context* "clgrpc"
  "Names this server's sessions: OpenSSL refuses to resume a session of a
verified client without one.")

(defun %ctx-ctrl (ctx command value)
  (openssl-call "SSL_CTX_ctrl" sb-alien:long
                (sb-sys:system-area-pointer sb-alien:int sb-alien:long sb-sys:system-area-pointer)
                ctx command value (sb-sys:int-sap 0)))

(defun %new-context (role)
  (ensure-openssl)
  (clear-errors)
  (let ((ctx (openssl-call "SSL_CTX_new" sb-sys:system-area-pointer (sb-sys:system-area-pointer)
                           (if (eq role :server)
                               (openssl-call "TLS_server_method" sb-sys:system-area-pointer ())
                               (openssl-call "TLS_client_method" sb-sys:system-area-pointer ())))))
    (when (zerop (sb-sys:sap-int ctx))
      (tls-fail "SSL_CTX_new failed"))
    (%configure-context ctx role)
    ctx))

(defun %configure-context (ctx role)
  "What every context of ROLE gets; frees CTX if it fails."
  (handler-bind ((error (lambda (e) (declare (ignore e))
                          (openssl-call "SSL_CTX_free" sb-alien:void (sb-sys:system-area-pointer) ctx))))
    (when (zerop (%ctx-ctrl ctx +ssl-ctrl-set-min-proto-version+ +tls1-2-version+))
      (tls-fail "cannot require TLS 1.2 or later"))
    ;; Idle connections give their read and write buffers back.
    (%ctx-ctrl ctx +ssl-ctrl-mode+ +ssl-mode-release-buffers+)
    (openssl-call "SSL_CTX_set_options" (sb-alien:unsigned 64) (sb-sys:system-area-pointer (sb-alien:unsigned 64))
                  ctx (logior +ssl-op-no-renegotiation+
                              (if (eq role :server) +ssl-op-cipher-server-preference+ 0)))
    (when (/= 1 (openssl-call "SSL_CTX_set_cipher_list" sb-alien:int
                              (sb-sys:system-area-pointer sb-alien:c-string) ctx *http2-tls12-ciphers*))
      (tls-fail "cannot restrict TLS 1.2 to HTTP/2's cipher suites"))
    (openssl-call "SSL_CTX_set_default_passwd_cb" sb-alien:void
                  (sb-sys:system-area-pointer sb-sys:system-area-pointer)
                  ctx (sb-alien:alien-sap (sb-alien:alien-callable-function 'no-passphrase)))))

(defun %check-readable (what path)
  (unless (and path (probe-file path))
    (error 'tls-error :message (format nil "~A ~S does not exist" what path)))
  (namestring (truename path)))

(defun %use-certificate (ctx cert-file key-file)
  (let ((cert (%check-readable "certificate file" cert-file))
        (key (%check-readable "key file" key-file)))
    (when (/= 1 (openssl-call "SSL_CTX_use_certificate_chain_file" sb-alien:int
                              (sb-sys:system-area-pointer sb-alien:c-string) ctx cert))
      (tls-fail "cannot use the certificate chain in ~A" cert))
    (when (/= 1 (openssl-call "SSL_CTX_use_PrivateKey_file" sb-alien:int
                              (sb-sys:system-area-pointer sb-alien:c-string sb-alien:int)
                              ctx key +ssl-filetype-pem+))
      (tls-fail "cannot use the private key in ~A" key))
    (when (/= 1 (openssl-call "SSL_CTX_check_private_key" sb-alien:int (sb-sys:system-area-pointer) ctx))
      (tls-fail "the key in ~A does not match the certificate in ~A" key cert))))

(defun %trust (ctx ca-file)
  "Verify peers against the CA certificates in CA-FILE, or the system's."
  (if ca-file
      (let ((ca (%check-readable "CA file" ca-file)))
        (when (/= 1 (openssl-call "SSL_CTX_load_verify_locations" sb-alien:int
                                  (sb-sys:system-area-pointer sb-alien:c-string sb-sys:system-area-pointer)
                                  ctx ca (sb-sys:int-sap 0)))
          (tls-fail "cannot load the CA certificates in ~A" ca)))
      (when (/= 1 (openssl-call "SSL_CTX_set_default_verify_paths" sb-alien:int
                                (sb-sys:system-area-pointer) ctx))
        (tls-fail "cannot load the system's CA certificates"))))

(defun %set-verify (ctx mode)
  (openssl-call "SSL_CTX_set_verify" sb-alien:void
                (sb-sys:system-area-pointer sb-alien:int sb-sys:system-area-pointer)
                ctx mode (sb-sys:int-sap 0)))

(defun make-server-context (&key cert-file key-file ca-file require-client-cert)
  "A server's TLS context: the certificate chain in CERT-FILE and its key in
KEY-FILE (PEM).  With REQUIRE-CLIENT-CERT, a client must present a
certificate that CA-FILE's certificates verify (mutual TLS); with CA-FILE
alone, a client certificate is verified if one is sent, and optional."
  (when (and require-client-cert (null ca-file))
    (error 'tls-error :message "requiring client certificates needs a CA file to verify them"))
  (let ((ctx (%new-context :server)))
    (handler-bind ((error (lambda (e) (declare (ignore e))
                            (openssl-call "SSL_CTX_free" sb-alien:void (sb-sys:system-area-pointer) ctx))))
      (%use-certificate ctx cert-file key-file)
      (let ((id *session-id-context*))
        (when (/= 1 (openssl-call "SSL_CTX_set_session_id_context" sb-alien:int
                                  (sb-sys:system-area-pointer sb-alien:c-string sb-alien:unsigned-int)
                                  ctx id (length id)))
          (tls-fail "cannot set the session id context")))
      (when ca-file
        (%trust ctx ca-file)
        (%set-verify ctx (if require-client-cert
                             (logior +ssl-verify-peer+ +ssl-verify-fail-if-no-peer-cert+)
                             +ssl-verify-peer+)))
      (openssl-call "SSL_CTX_set_alpn_select_cb" sb-alien:void
                    (sb-sys:system-area-pointer sb-sys:system-area-pointer sb-sys:system-area-pointer)
                    ctx (sb-alien:alien-sap (sb-alien:alien-callable-function 'select-h2))
                    (sb-sys:int-sap 0)))
    (%make-tls-context ctx :server)))

(defun make-client-context (&key ca-file cert-file key-file)
  "A client's TLS context: servers are verified against the CA certificates
in CA-FILE, or the system's when NIL; CERT-FILE and KEY-FILE, if given, are
the client's own certificate for mutual TLS."
  (let ((ctx (%new-context :client)))
    (handler-bind ((error (lambda (e) (declare (ignore e))
                            (openssl-call "SSL_CTX_free" sb-alien:void (sb-sys:system-area-pointer) ctx))))
      (%trust ctx ca-file)
      (%set-verify ctx +ssl-verify-peer+)
      (when (or cert-file key-file)
        (%use-certificate ctx cert-file key-file))
      (let ((protocols (make-array 3 :element-type '(unsigned-byte 8)
                                     :initial-contents (list 2 (char-code #\h) (char-code #\2)))))
        (sb-sys:with-pinned-objects (protocols)
          ;; Returns 0 on success, unlike the rest of the API.
          (unless (zerop (openssl-call "SSL_CTX_set_alpn_protos" sb-alien:int
                                       (sb-sys:system-area-pointer sb-sys:system-area-pointer sb-alien:unsigned-int)
                                       ctx (sb-sys:vector-sap protocols) (length protocols)))
            (tls-fail "cannot offer ALPN h2")))))
    (%make-tls-context ctx :client)))
