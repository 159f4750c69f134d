;;;; gzip message compression: the codec and its limits, then compressed
;;;; calls both ways over loopback, message by message.

(in-package #:clgrpc.tests)

(in-suite :clgrpc.grpc)

(defun gzip-status (thunk)
  "The status name of the GRPC-ERROR THUNK signals, or :OK."
  (handler-case (progn (funcall thunk) :ok)
    (clgrpc.grpc:grpc-error (e) (clgrpc.grpc:status-code-name (clgrpc.grpc:grpc-error-code e)))))

(test gzip-codec
  (let* ((data (filled 100000 7))
         (zipped (clgrpc.grpc::gzip-octets data 0 (length data))))
    (is (< (length zipped) 1000))
    (is (equalp data (clgrpc.grpc::gunzip-octets zipped 0 (length zipped) 100000)))
    ;; a message that would inflate past the limit stops there
    (is (equal "RESOURCE_EXHAUSTED"
               (gzip-status (lambda () (clgrpc.grpc::gunzip-octets zipped 0 (length zipped) 99999)))))
    (is (equal "INTERNAL"
               (gzip-status (lambda () (clgrpc.grpc::gunzip-octets zipped 0 (floor (length zipped) 2)
                                                                    100000)))))
    (is (equal "INTERNAL" (gzip-status (lambda () (clgrpc.grpc::gunzip-octets (bytes 1 2 3 4 5 6 7 8 9 10)
                                                                             0 10 100)))))))

(test gzip-malformed-streams-are-internal
  ;; Streams on which chipz signals errors of its own rather than a
  ;; CHIPZ-ERROR (an unsupported FEXTRA field, codes past its tables, failed
  ;; assertions); fuzz/crashes/gzip holds these and more.
  (dolist (input '("1f8b081e040061620200" "1f8b0800000000d283029c15f2cb528b"
                   "1f8bcecb7f90dc25e9080000000500faff0002" "1f8b0800000000000403537d78fffbc9e363f6"
                   "1f8b080000f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f4f453"
                   "1f8bd7c863ecdc25e92000000000000400000000000403bf48cdcdc98d029c15f61a"))
    (let ((octets (hex input)))
      (is (equal "INTERNAL"
                 (gzip-status (lambda () (clgrpc.grpc::gunzip-octets octets 0 (length octets) 65536))))
          "~A" input))))

(test accept-encoding-lists
  (is (clgrpc.grpc::accepts-gzip-p "gzip"))
  (is (clgrpc.grpc::accepts-gzip-p "identity, deflate,gzip"))
  (is (not (clgrpc.grpc::accepts-gzip-p "identity,deflate")))
  (is (not (clgrpc.grpc::accepts-gzip-p nil))))

(test compressed-unary-both-ways
  (with-grpc (ch)
    (let ((message (filled 50000 3)))
      (multiple-value-bind (response call) (unary ch "Zip" message :compress t)
        (is (equalp message response))
        (is (clgrpc.grpc:call-received-compressed-p call)))
      (multiple-value-bind (response call) (unary ch "Zip" message)
        (is (equalp message response))
        (is (clgrpc.grpc:call-received-compressed-p call)))
      (is (equal '((:request-compressed nil) (:request-compressed t)) *observed*))
      ;; a handler that does not ask for compression answers uncompressed
      (multiple-value-bind (response call) (unary ch "Echo" message :compress t)
        (is (equalp message response))
        (is (not (clgrpc.grpc:call-received-compressed-p call)))))))

(test compressed-response-keeps-its-encoding-when-metadata-is-dropped
  ;; The client takes at most 1024 octets of headers: the server drops its
  ;; custom metadata but still says how the message is encoded.
  (with-grpc (ch)
    (setf (clgrpc.grpc::channel-connection-options ch)
          (list* :max-header-list-size 1024 (clgrpc.grpc::channel-connection-options ch)))
    (let ((message (filled 5000 4)))
      (multiple-value-bind (response call) (unary ch "ZipBigHeaders" message)
        (is (equalp message response))
        (is (clgrpc.grpc:call-received-compressed-p call))
        (is (null (assoc "x-big" (clgrpc.grpc:call-response-metadata call) :test #'string=)))))))

(test compression-message-by-message
  (with-grpc (ch)
    (let ((call (clgrpc.grpc:server-streaming-call ch "/test.Svc/ZipStream" (filled 1000 1))))
      (is (equal '(t nil t)
                 (loop for m = (clgrpc.grpc:call-recv call)
                       while m
                       collect (clgrpc.grpc:call-received-compressed-p call)))))
    (let ((call (clgrpc.grpc:client-streaming-call ch "/test.Svc/Flags" :compress t)))
      (clgrpc.grpc:call-send call (bytes 1))
      (clgrpc.grpc:call-send call (bytes 2) :compress nil)
      (clgrpc.grpc:call-send call (bytes 3))
      (is (equalp (bytes 1 0 1) (clgrpc.grpc:call-close-and-recv call))))))

(test compressed-message-bounded-by-receive-limit
  ;; 1 MB of zeros is a few kilobytes of gzip: under the server's 100 kB
  ;; limit on the wire, far over it inflated.
  (with-grpc (ch :max-receive-message-size 100000)
    (is (equal '("RESOURCE_EXHAUSTED")
               (let ((status (status-of (lambda () (unary ch "Echo" (filled 1000000 0) :compress t)))))
                 (list (first status)))))
    (is (equalp (bytes 5) (unary ch "Echo" (bytes 5) :compress t)))))
