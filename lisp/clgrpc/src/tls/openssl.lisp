;;;; OpenSSL 3 (libssl.so.3 and libcrypto.so.3), bound through sb-alien.
;;;;
;;;; The libraries are opened on first use, by soname, so that a saved
;;;; executable records no path of the machine that built it and a program
;;;; that never speaks TLS needs no OpenSSL at all.  The dynamic linker finds
;;;; them the usual way: LD_LIBRARY_PATH (tests point it at the pinned Debian
;;;; package), then the system's library directories (the server's image
;;;; carries the same package).  *OPENSSL-VERSION* says which one was loaded.
;;;;
;;;; Only what the memory-BIO sessions of session.lisp and the contexts of
;;;; context.lisp call is bound here.  Every function is looked up through
;;;; the linkage table when first called, after the libraries are open.

(in-package #:clgrpc.tls)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(define-condition tls-error (error)
  ((message :initarg :message :reader tls-error-message))
  (:report (lambda (c s) (write-string (tls-error-message c) s)))
  (:documentation "A TLS failure: bad credentials, a failed handshake or a
protocol error, with OpenSSL's reason when it gave one."))

(defvar *openssl-version* nil
  "OpenSSL's version string once the libraries are loaded, else NIL.")

(defvar *openssl-lock* (sb-thread:make-mutex :name "openssl load"))

(defun forget-openssl ()
  "A saved executable opens OpenSSL again on first use, where it runs."
  (setf *openssl-version* nil))

(pushnew 'forget-openssl sb-ext:*save-hooks*)

(defmacro openssl-call (name result (&rest arg-types) &rest args)
  "Call the OpenSSL function NAME (a string) of the given C signature."
  `(sb-alien:alien-funcall
    (sb-alien:extern-alien ,name (function ,result ,@arg-types))
    ,@args))

(defconstant +openssl-init-no-load-config+ #x80)
(defconstant +openssl-init-no-atexit+ #x80000)

(declaim (ftype function tls-fail))

(defun ensure-openssl ()
  "Open libcrypto.so.3 and libssl.so.3 if not yet done; returns the version
string.  Signals TLS-ERROR if the dynamic linker finds no OpenSSL 3."
  (or *openssl-version*
      (sb-thread:with-mutex (*openssl-lock*)
        (or *openssl-version*
            (progn
              (handler-case
                  (progn (sb-alien:load-shared-object "libcrypto.so.3" :dont-save t)
                         (sb-alien:load-shared-object "libssl.so.3" :dont-save t))
                (error (e)
                  (error 'tls-error
                         :message (format nil "cannot load OpenSSL 3 (libssl.so.3 and ~
                                               libcrypto.so.3; set LD_LIBRARY_PATH to their ~
                                               directory): ~A" e))))
              ;; Before anything else: OpenSSL then never reads the host's
              ;; openssl.cnf, which would change its defaults behind our back.
              (when (/= 1 (openssl-call "OPENSSL_init_ssl" sb-alien:int
                                        ((sb-alien:unsigned 64) sb-sys:system-area-pointer)
                                        ;; and no exit-time cleanup that could race
                                        ;; reactor threads still in OpenSSL
                                        (logior +openssl-init-no-load-config+
                                                +openssl-init-no-atexit+)
                                        (sb-sys:int-sap 0)))
                (tls-fail "OpenSSL failed to initialise"))
              (setf *openssl-version*
                    (openssl-call "OpenSSL_version" sb-alien:c-string (sb-alien:int) 0)))))))

;;; ------------------------------------------------------------------
;;; Constants (openssl/ssl.h, openssl/tls1.h, openssl/x509_vfy.h)

(defconstant +ssl-error-none+ 0)
(defconstant +ssl-error-ssl+ 1)
(defconstant +ssl-error-want-read+ 2)
(defconstant +ssl-error-want-write+ 3)
(defconstant +ssl-error-syscall+ 5)
(defconstant +ssl-error-zero-return+ 6)

(defconstant +ssl-filetype-pem+ 1)
(defconstant +ssl-verify-none+ 0)
(defconstant +ssl-verify-peer+ 1)
(defconstant +ssl-verify-fail-if-no-peer-cert+ 2)

(defconstant +ssl-ctrl-mode+ 33)
(defconstant +ssl-ctrl-set-tlsext-hostname+ 55)
(defconstant +ssl-ctrl-set-min-proto-version+ 123)
(defconstant +tlsext-nametype-host-name+ 0)
(defconstant +tls1-2-version+ #x0303)
(defconstant +ssl-mode-release-buffers+ #x10)
(defconstant +ssl-op-no-renegotiation+ (ash 1 30))
(defconstant +ssl-op-cipher-server-preference+ #x00400000)
(defconstant +x509-check-flag-no-partial-wildcards+ #x4)

(defconstant +ssl-tlsext-err-ok+ 0)
(defconstant +ssl-tlsext-err-alert-fatal+ 2)

(defconstant +x509-v-ok+ 0)

;;; ------------------------------------------------------------------
;;; Errors

(defun clear-errors ()
  "Empty this thread's OpenSSL error queue, so the next failure's reason is
its own."
  (openssl-call "ERR_clear_error" sb-alien:void ()))

(defun error-reasons ()
  "This thread's queued OpenSSL errors, oldest first, as one string (the
queue is emptied), or NIL if there are none."
  (let ((buffer (make-array 256 :element-type '(unsigned-byte 8)))
        (reasons '()))
    (loop
      (let ((code (openssl-call "ERR_get_error" sb-alien:unsigned-long ())))
        (when (zerop code)
          (return))
        (sb-sys:with-pinned-objects (buffer)
          (openssl-call "ERR_error_string_n" sb-alien:void
                        (sb-alien:unsigned-long sb-sys:system-area-pointer sb-alien:unsigned-long)
                        code (sb-sys:vector-sap buffer) (length buffer)))
        (push (map 'string #'code-char (subseq buffer 0 (or (position 0 buffer) (length buffer))))
              reasons)))
    (and reasons (format nil "~{~A~^; ~}" (nreverse reasons)))))

(defun tls-fail (format-control &rest arguments)
  "Signal TLS-ERROR with the message and OpenSSL's queued reasons."
  (let ((reasons (error-reasons)))
    (error 'tls-error :message (format nil "~?~@[: ~A~]" format-control arguments reasons))))
