;;;; clgrpc's TLS against peers built on the same OpenSSL: the ALPN
;;;; selection, a peer that floods key updates and never reads, and what a
;;;; handler sees of a verified client.  The credentials are those of
;;;; //tools/testcerts, in the directory CLGRPC_TEST_CREDENTIALS names; the
;;;; dynamic linker must find libssl.so.3 (the Bazel test sets both).

(defpackage #:clgrpc.tls-tests
  (:use #:cl #:fiveam #:clgrpc.octets)
  (:export #:run-tests-or-fail))

(in-package #:clgrpc.tls-tests)

(def-suite :clgrpc-tls :description "clgrpc's TLS.")
(in-suite :clgrpc-tls)

(defun credential (name)
  (let ((dir (sb-ext:posix-getenv "CLGRPC_TEST_CREDENTIALS")))
    (unless (and dir (plusp (length dir)))
      (error "CLGRPC_TEST_CREDENTIALS must name the directory of //tools/testcerts:credentials"))
    (namestring (concatenate (quote string) (string-right-trim "/" dir) "/" name))))

(defun server-context (&rest keys)
  (apply #'clgrpc.tls:make-server-context :cert-file (credential "server.pem")
                                           :key-file (credential "server.key") keys))

(defun client-context (&rest keys)
  (apply #'clgrpc.tls:make-client-context :ca-file (credential "ca.pem") keys))

(defmacro with-tls-server ((server port &rest context-keys) &body body)
  "Run BODY with SERVER, a clgrpc server over TLS with /test.Svc/Echo and
/test.Svc/Peer (the client certificate's subject and names), on PORT."
  `(let* ((,server (clgrpc.grpc:make-server :tls (server-context ,@context-keys)))
          (,port (progn
                   (clgrpc.grpc:register-method ,server "/test.Svc/Echo" (lambda (req call) (declare (ignore call)) req))
                   (clgrpc.grpc:register-method
                    ,server "/test.Svc/Peer"
                    (lambda (req call)
                      (declare (ignore req))
                      (let ((tls (clgrpc.grpc:call-peer-tls call)))
                        (string-to-utf8
                         (format nil "~A~{ ~A~}" (clgrpc.tls:tls-session-peer-subject tls)
                                 (clgrpc.tls:tls-session-peer-names tls))))))
                   (clgrpc.grpc:server-start ,server :host "127.0.0.1" :port 0))))
     (unwind-protect (progn ,@body)
       (clgrpc.grpc:server-stop ,server :grace 0))))

(defun octets-of (&rest values)
  (let ((o (make-octets (length values))))
    (replace o values)))

(defun call (port path request &rest context-keys)
  (let ((channel (clgrpc.grpc:make-channel "127.0.0.1" port :tls (apply #'client-context context-keys)
                                                              :server-name "foo.test.google.fr")))
    (unwind-protect (clgrpc.grpc:unary-call channel path request :timeout 10)
      (clgrpc.grpc:channel-close channel))))

;;; ------------------------------------------------------------------
;;; ALPN selection, without OpenSSL

(defun wire (protocols)
  "PROTOCOLS as the length-prefixed list of a ClientHello's ALPN extension."
  (coerce (loop for p in protocols
                append (cons (length p) (map 'list #'char-code p)))
          '(vector (unsigned-byte 8))))

(defun select (wire)
  "What the server's ALPN callback does with the client's list WIRE."
  (let ((in (make-array (max 1 (length wire)) :element-type '(unsigned-byte 8) :initial-element 0))
        (out (make-array 1 :element-type '(unsigned-byte 64) :initial-element 0))
        (outlen (make-array 8 :element-type '(unsigned-byte 8) :initial-element 0)))
    (replace in wire)
    (sb-sys:with-pinned-objects (in out outlen)
      (let ((result (clgrpc.tls::%select-h2 (sb-sys:vector-sap out) (sb-sys:vector-sap outlen)
                                            (sb-sys:vector-sap in) (length wire))))
        (if (zerop result)
            (let ((at (- (aref out 0) (sb-sys:sap-int (sb-sys:vector-sap in)))))
              (map 'string #'code-char (subseq in at (+ at (aref outlen 0)))))
            :refused)))))

(test alpn-selects-h2-only
  (is (equal "h2" (select (wire '("h2")))))
  (is (equal "h2" (select (wire '("http/1.1" "h2")))))
  (is (equal "h2" (select (wire '("h2c" "spdy/3" "h2")))))
  (is (eq :refused (select (wire '("http/1.1")))))
  (is (eq :refused (select (wire '("h2c" "h3")))))
  (is (eq :refused (select (wire '()))))
  ;; A length that runs past the end of the list is not read beyond it.
  (is (eq :refused (select #(5 104 50))))
  (is (eq :refused (select #(2 104)))))

;;; ------------------------------------------------------------------
;;; Identity

(test handler-sees-the-verified-client
  (with-tls-server (server port :ca-file (credential "ca.pem") :require-client-cert t)
    (let ((answer (utf8-to-string
                   (call port "/test.Svc/Peer" (make-octets 0)
                         :cert-file (credential "client.pem") :key-file (credential "client.key")))))
      (is (search "CN=grpcbench test client" answer))
      (is (search "DNS:client.test.grpcbench" answer))
      (is (search "URI:spiffe://grpcbench.test/client" answer)))
    ;; Without a certificate: refused, with OpenSSL's reason in the status.
    (handler-case (progn (call port "/test.Svc/Echo" (octets-of 1)) (fail "answered without a certificate"))
      (clgrpc.grpc:grpc-error (e)
        (is (= clgrpc.grpc:+unavailable+ (clgrpc.grpc:grpc-error-code e)))
        (is (search "certificate required" (clgrpc.grpc:grpc-error-message e)))))))

;;; ------------------------------------------------------------------
;;; A peer that floods key updates and never reads

(defun blocking-handshake (session fd)
  "Drive a client SESSION's handshake over the connected FD."
  (let ((buf (make-octets 65536))
        (deadline (+ (get-internal-real-time) (* 10 internal-time-units-per-second))))
    (loop
      (let ((state (clgrpc.tls:session-handshake session)))
        (loop until (eq (clgrpc.tls:session-send-pending session fd) :done) do (sleep 0.001))
        (when (eq state :done) (return))
        (when (> (get-internal-real-time) deadline) (error "handshake timed out"))
        (when (clgrpc.net:fd-wait-readable fd 1)
          (let ((n (clgrpc.net:fd-recv-some fd buf 0 (length buf))))
            (when (integerp n)
              (when (zerop n) (error "the server closed the connection"))
              (clgrpc.tls:session-feed session buf 0 n))))))))

(defun request-key-update (session)
  "Queue a KeyUpdate that asks the peer to update its keys too."
  (clgrpc.tls::with-session (session)
    (let ((ssl (clgrpc.tls::tls-session-ssl session)))
      (clgrpc.tls::openssl-call "SSL_key_update" sb-alien:int (sb-sys:system-area-pointer sb-alien:int) ssl 1)
      (clgrpc.tls::openssl-call "SSL_do_handshake" sb-alien:int (sb-sys:system-area-pointer) ssl))))

(defun server-connection (server)
  (loop for conn being the hash-keys of (clgrpc.grpc::server-connections server) return conn))

(test key-update-flood-from-a-peer-that-does-not-read
  ;; Each KeyUpdate asks the server for one back.  The peer never reads, so
  ;; those replies wait for the socket: the server must stop reading it
  ;; rather than hold them without bound, and serve others meanwhile.
  (with-tls-server (server port)
    (let* ((socket (clgrpc.net:tcp-connect "127.0.0.1" port 5))
           (fd (clgrpc.net:socket-fd socket))
           (session (clgrpc.tls:make-tls-session (client-context) :server-name "foo.test.google.fr"))
           (sent 0))
      (unwind-protect
           (progn
             (setf (sb-bsd-sockets:sockopt-receive-buffer socket) 4096)
             (blocking-handshake session fd)
             (let ((preface (concatenate 'octets clgrpc.http2:+connection-preface+
                                         (make-array 9 :element-type '(unsigned-byte 8)
                                                       :initial-contents '(0 0 0 4 0 0 0 0 0)))))
               (clgrpc.tls:session-write-some session fd preface 0 (length preface)))
             ;; Flood until the server stops taking them for two seconds, or
             ;; 64 MB of key updates (the server would hold 1:1 of that).
             (let ((stalled-since nil))
               (loop while (< sent (* 64 1024 1024))
                     do (dotimes (i 200) (request-key-update session))
                        (let ((before (clgrpc.tls:session-pending-octets session)))
                          (clgrpc.tls:session-send-pending session fd)
                          (let ((went (- before (clgrpc.tls:session-pending-octets session))))
                            (incf sent went)
                            (if (plusp went)
                                (setf stalled-since nil)
                                (progn
                                  (unless stalled-since (setf stalled-since (get-internal-real-time)))
                                  (when (> (- (get-internal-real-time) stalled-since)
                                           (* 2 internal-time-units-per-second))
                                    (return))
                                  (sleep 0.01)))))))
             (let* ((conn (server-connection server))
                    (backlog (clgrpc.tls:session-pending-octets (clgrpc.http2:connection-tls conn))))
               (format t "~&  sent ~,1F MB of key updates; the server holds ~D octets of replies, reading paused: ~A~%"
                       (/ sent 1d6) backlog (clgrpc.http2::conn-read-paused conn))
               (is (< backlog (* 512 1024)) "the server holds ~D octets of key-update replies" backlog)
               (is (clgrpc.http2::conn-read-paused conn)))
             ;; Another client is served meanwhile.
             (is (equalp #(7) (call port "/test.Svc/Echo" (octets-of 7)))))
        (clgrpc.net:socket-close socket)
        (clgrpc.tls:session-free session)))))

(defun run-tests-or-fail ()
  (unless (run! :clgrpc-tls)
    (error "clgrpc TLS tests failed")))
