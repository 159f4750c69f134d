;;;; The TLS flags of the Lisp servers and clients, and the clgrpc TLS
;;;; contexts they ask for: one place for the flag texts, the checks of
;;;; their combinations and the errors, shared by the RouteGuide and interop
;;;; programs.  Names are arguments, because the interop programs take
;;;; grpc-go's interop flag names (-use_tls, -tls_cert_file, ...) where the
;;;; RouteGuide ones take -tls, -cert_file, ...

(defpackage #:tls-flags
  (:use #:cl #:cmdline)
  (:documentation "TLS command-line flags and the clgrpc contexts they describe.")
  (:export #:server-flags #:server-context #:client-flags #:client-context))

(in-package #:tls-flags)

(defun option (options name)
  "The parsed value of the flag NAME in OPTIONS (cmdline's keyword for it)."
  (getf options (intern (string-upcase (substitute #\- #\_ name)) :keyword)))

(defun given-p (value)
  (and value (not (equal value ""))))

(defun server-flags (&key (tls "tls") (cert "cert_file") (key "key_file"))
  "Flag specs of a TLS server: the switch TLS, the certificate chain CERT and
its key KEY, and -ca_file and -require_client_cert for client certificates."
  (list (flag-spec tls :bool nil "serve over TLS (ALPN h2) instead of plaintext")
        (flag-spec cert :string "" (format nil "the certificate chain `file` (PEM) for -~A" tls))
        (flag-spec key :string "" (format nil "the private key `file` (PEM) for -~A" tls))
        (flag-spec "ca_file" :string ""
                   "verify client certificates against the CA certificates in this `file` (PEM)")
        (flag-spec "require_client_cert" :bool nil
                   "refuse clients without a certificate that -ca_file verifies (mutual TLS)")))

(defun context-or-flag-error (thunk)
  (handler-case (funcall thunk)
    (clgrpc.tls:tls-error (e) (flag-fail "~A" e))))

(defun server-context (options &key (tls "tls") (cert "cert_file") (key "key_file"))
  "The server context that OPTIONS (parsed SERVER-FLAGS of the same names)
ask for, NIL for plaintext, or a FLAG-ERROR that says what is missing or
wrong."
  (let ((cert-file (option options cert))
        (key-file (option options key))
        (ca-file (option options "ca_file"))
        (require (option options "require_client_cert")))
    (cond ((not (option options tls))
           (when (or (given-p cert-file) (given-p key-file) (given-p ca-file) require)
             (flag-fail "-~A, -~A, -ca_file and -require_client_cert need -~A" cert key tls))
           nil)
          ((not (and (given-p cert-file) (given-p key-file)))
           (flag-fail "-~A needs -~A and -~A" tls cert key))
          ((and require (not (given-p ca-file)))
           (flag-fail "-require_client_cert needs -ca_file"))
          (t
           (context-or-flag-error
            (lambda ()
              (clgrpc.tls:make-server-context :cert-file cert-file :key-file key-file
                                              :ca-file (and (given-p ca-file) ca-file)
                                              :require-client-cert require)))))))

(defun client-flags (&key (tls "tls") trust-switch)
  "Flag specs of a TLS client: the switch TLS, -ca_file (trusted only with
the switch TRUST-SWITCH, if given, as grpc-go's interop client's
-use_test_ca), -cert_file and -key_file for mutual TLS, and
-server_host_override."
  (append
   (list (flag-spec tls :bool nil "connect over TLS (ALPN h2) instead of plaintext"))
   (and trust-switch
        (list (flag-spec trust-switch :bool nil
                         "verify the server against -ca_file instead of the system's CA certificates")))
   (list (flag-spec "ca_file" :string ""
                    (if trust-switch
                        (format nil "the `file` of CA certificates (PEM) that -~A trusts" trust-switch)
                        "verify the server against the CA certificates in this `file` (PEM) instead of the system's"))
         (flag-spec "cert_file" :string "" "the client's certificate chain `file` (PEM), for mutual TLS")
         (flag-spec "key_file" :string "" "the client's private key `file` (PEM), for mutual TLS")
         (flag-spec "server_host_override" :string ""
                    "the `name` the server's certificate must carry (default: the server's host)"))))

(defun client-context (options &key (tls "tls") trust-switch)
  "The client context that OPTIONS (parsed CLIENT-FLAGS of the same names)
ask for and the server name to verify (NIL: the host), or NIL for plaintext;
a FLAG-ERROR for a bad combination."
  (let ((ca-file (option options "ca_file"))
        (cert-file (option options "cert_file"))
        (key-file (option options "key_file"))
        (override (option options "server_host_override")))
    (cond ((not (option options tls))
           (when (or (and trust-switch (option options trust-switch))
                     (given-p ca-file) (given-p cert-file) (given-p key-file) (given-p override))
             (flag-fail "~@[-~A, ~]-ca_file, -cert_file, -key_file and -server_host_override need -~A"
                        trust-switch tls))
           nil)
          ((and trust-switch (option options trust-switch) (not (given-p ca-file)))
           (flag-fail "-~A needs -ca_file: this client carries no test CA of its own" trust-switch))
          ((not (eq (given-p cert-file) (given-p key-file)))
           (flag-fail "-cert_file and -key_file go together"))
          (t
           (values
            (context-or-flag-error
             (lambda ()
               (clgrpc.tls:make-client-context
                :ca-file (and (given-p ca-file) (or (null trust-switch) (option options trust-switch))
                              ca-file)
                :cert-file (and (given-p cert-file) cert-file)
                :key-file (and (given-p key-file) key-file))))
            (and (given-p override) override))))))
