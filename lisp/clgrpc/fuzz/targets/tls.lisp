;;;; TLS from a peer (tls/session.lisp over OpenSSL, and the ALPN selection
;;;; of tls/context.lisp): arbitrary octets fed, as ciphertext from a client,
;;;; to a fresh server session over memory BIOs, in two parts with a
;;;; handshake step after each.
;;;;
;;;;   split (1) | octets ...
;;;;
;;;; SPLIT chooses where the octets are cut.  A handshake cannot complete
;;;; (the client's Finished depends on the server's random), so it must end
;;;; waiting for more (:WANT) or fail with TLS-ERROR, the documented
;;;; rejection; the session is freed either way.  Most of the parsing is in
;;;; OpenSSL, outside the instrumented Lisp, so a rejection with a reason not
;;;; seen before also counts as new coverage.
;;;;
;;;; The server's credentials are those of //tools/testcerts, in the
;;;; directory CLGRPC_TEST_CREDENTIALS names, as for the TLS tests; the
;;;; dynamic linker must find libssl.so.3.

(in-package #:clgrpc.fuzz)

(defun credential (name)
  (let ((dir (sb-ext:posix-getenv "CLGRPC_TEST_CREDENTIALS")))
    (unless (and dir (plusp (length dir)))
      (error "CLGRPC_TEST_CREDENTIALS must name the directory of //tools/testcerts:credentials"))
    (concatenate 'string (string-right-trim "/" dir) "/" name)))

(defun tls-runner ()
  (let ((context (clgrpc.tls:make-server-context :cert-file (credential "server.pem")
                                                 :key-file (credential "server.key"))))
    (lambda (octets)
      (when (plusp (length octets))
        (let ((session (clgrpc.tls:make-tls-session context))
              (split (min (length octets) (1+ (floor (* (aref octets 0) (length octets)) 256)))))
          (unwind-protect
               (progn
                 (clgrpc.tls:session-feed session octets 1 split)
                 (when (eq (clgrpc.tls:session-handshake session) :want)
                   (clgrpc.tls:session-feed session octets split (length octets))
                   (let ((result (clgrpc.tls:session-handshake session)))
                     (check (eq result :want) "handshake ~S from a peer without the keys" result))))
            (clgrpc.tls:session-free session)))))))

(defun client-hello (&key (server-name "foo.test.google.fr"))
  "The first flight of a clgrpc client: a ClientHello offering TLS 1.2 and
1.3 and ALPN h2."
  (let* ((context (clgrpc.tls:make-client-context :ca-file (credential "ca.pem")))
         (session (clgrpc.tls:make-tls-session context :server-name server-name)))
    (unwind-protect
         (progn
           (clgrpc.tls:session-handshake session)
           (multiple-value-bind (sap length)
               (clgrpc.tls::%pending-octets (clgrpc.tls::tls-session-wbio session))
             (let ((o (make-octets length)))
               (dotimes (i length o)
                 (setf (aref o i) (sb-sys:sap-ref-8 sap i))))))
      (clgrpc.tls:session-free session))))

(defun tls-seeds ()
  (let ((hello (client-hello)))
    (list (cons "client-hello" (concatenate 'octets (octets-from 255) hello))
          (cons "client-hello-ip" (concatenate 'octets (octets-from 255) (client-hello :server-name "127.0.0.1")))
          ;; The hello cut in two, and followed by a record that is not TLS.
          (cons "client-hello-split" (concatenate 'octets (octets-from 100) hello))
          (cons "client-hello-then-garbage"
                (concatenate 'octets (octets-from 200) hello (octets-from 23 3 3 0 4 1 2 3 4)))
          ;; Plaintext HTTP/2 and HTTP/1.1 where TLS was expected.
          (cons "h2-preface" (octets-from 255 "PRI * HTTP/2.0" 13 10 13 10 "SM" 13 10 13 10))
          (cons "http1" (octets-from 255 "GET / HTTP/1.1" 13 10 13 10)))))

(define-target "tls"
  :files '((:clgrpc . "src/tls/context.lisp")
           (:clgrpc . "src/tls/session.lisp"))
  :runner #'tls-runner
  :expected '(clgrpc.tls:tls-error)
  :seeds #'tls-seeds
  :max-length 4096
  :outcome-feedback t
  ;; Record headers (handshake, alert, change cipher spec, application data),
  ;; ALPN lists with and without h2, an extension header.
  :tokens (list (octets-from 22 3 1 0 #x80) (octets-from 21 3 3 0 2 2 40) (octets-from 20 3 3 0 1 1)
                (octets-from 23 3 3 0 #x10) (octets-from 0 #x10 0 5 0 3 2 "h2")
                (octets-from 0 #x10 0 #x0b 0 9 8 "http/1.1") (octets-from 2 "h2" 2 "h3")
                (octets-from 0 #x2b 0 3 2 3 4)))
