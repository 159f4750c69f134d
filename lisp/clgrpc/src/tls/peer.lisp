;;;; Who the peer is: the subject and subject alternative names of the
;;;; certificate it presented and OpenSSL verified, for a service that
;;;; authorises by identity (mutual TLS) and for a client's diagnostics.

(in-package #:clgrpc.tls)

(declaim (optimize (speed 1) (safety 1) (debug 1)))

(defconstant +nid-subject-alt-name+ 85)
(defconstant +gen-email+ 1)
(defconstant +gen-dns+ 2)
(defconstant +gen-uri+ 6)
(defconstant +gen-ipadd+ 7)

(defun %asn1-octets (string)
  "The content of an ASN1_STRING, as octets."
  (let ((data (openssl-call "ASN1_STRING_get0_data" sb-sys:system-area-pointer
                            (sb-sys:system-area-pointer) string))
        (length (openssl-call "ASN1_STRING_length" sb-alien:int (sb-sys:system-area-pointer) string)))
    (let ((octets (make-array (max length 0) :element-type '(unsigned-byte 8))))
      (dotimes (i (length octets) octets)
        (setf (aref octets i) (sb-sys:sap-ref-8 data i))))))

(defun %ip-string (octets)
  (case (length octets)
    (4 (format nil "~{~D~^.~}" (coerce octets 'list)))
    (16 (format nil "~{~(~X~)~^:~}" (loop for i below 16 by 2
                                         collect (+ (* 256 (aref octets i)) (aref octets (1+ i))))))
    (t "?")))

(defun %general-name (name)
  "One entry of a subjectAltName as OpenSSL prints it (\"DNS:host\",
\"IP Address:1.2.3.4\", \"URI:...\", \"email:...\"), or NIL for another kind."
  (let ((type (sb-sys:signed-sap-ref-32 name 0))
        (value (sb-sys:sap-ref-sap name 8)))
    (flet ((text () (map 'string #'code-char (%asn1-octets value))))
      (cond ((= type +gen-dns+) (concatenate 'string "DNS:" (text)))
            ((= type +gen-uri+) (concatenate 'string "URI:" (text)))
            ((= type +gen-email+) (concatenate 'string "email:" (text)))
            ((= type +gen-ipadd+) (concatenate 'string "IP Address:" (%ip-string (%asn1-octets value))))))))

(defun %alt-names (x509)
  (let ((names (openssl-call "X509_get_ext_d2i" sb-sys:system-area-pointer
                             (sb-sys:system-area-pointer sb-alien:int sb-sys:system-area-pointer
                                                        sb-sys:system-area-pointer)
                             x509 +nid-subject-alt-name+ (sb-sys:int-sap 0) (sb-sys:int-sap 0))))
    (if (zerop (sb-sys:sap-int names))
        '()
        (unwind-protect
             (loop for i below (openssl-call "OPENSSL_sk_num" sb-alien:int (sb-sys:system-area-pointer) names)
                   for name = (%general-name
                               (openssl-call "OPENSSL_sk_value" sb-sys:system-area-pointer
                                             (sb-sys:system-area-pointer sb-alien:int) names i))
                   when name collect name)
          (openssl-call "GENERAL_NAMES_free" sb-alien:void (sb-sys:system-area-pointer) names)))))

(defun %subject (x509)
  (let ((buffer (make-array 1024 :element-type '(unsigned-byte 8) :initial-element 0)))
    (sb-sys:with-pinned-objects (buffer)
      (openssl-call "X509_NAME_oneline" sb-sys:system-area-pointer
                    (sb-sys:system-area-pointer sb-sys:system-area-pointer sb-alien:int)
                    (openssl-call "X509_get_subject_name" sb-sys:system-area-pointer
                                  (sb-sys:system-area-pointer) x509)
                    (sb-sys:vector-sap buffer) (length buffer)))
    (map 'string #'code-char (subseq buffer 0 (or (position 0 buffer) (length buffer))))))

(defun %peer-identity (ssl)
  "The peer certificate's subject (\"/C=../CN=..\") and alternative names,
or NIL and () if the peer presented none."
  (let ((x509 (openssl-call "SSL_get1_peer_certificate" sb-sys:system-area-pointer
                            (sb-sys:system-area-pointer) ssl)))
    (if (zerop (sb-sys:sap-int x509))
        (values nil '())
        (unwind-protect (values (%subject x509) (%alt-names x509))
          (openssl-call "X509_free" sb-alien:void (sb-sys:system-area-pointer) x509)))))
