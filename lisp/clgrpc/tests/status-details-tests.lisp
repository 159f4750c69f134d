;;;; Rich errors: google.rpc.Status in grpc-status-details-bin, encoded and
;;;; decoded, and carried from a handler's GRPC-ERROR to the client's.
;;;; Against grpc-go's status.WithDetails: go/features.

(in-package #:clgrpc.tests)

(def-suite :clgrpc.status-details :in :clgrpc)
(in-suite :clgrpc.status-details)

(test rpc-status-octets-round-trip
  (let* ((details (list (clgrpc.grpc:make-status-detail "type.googleapis.com/google.rpc.ErrorInfo" (bytes 10 3 1 2 3))
                        (clgrpc.grpc:make-status-detail "type.googleapis.com/x.Empty" (bytes))))
         (octets (clgrpc.grpc:encode-rpc-status clgrpc.grpc:+invalid-argument+ "bad café" details)))
    ;; Field 1 (code 3), then field 2 (the message): protobuf's own order.
    (is (equalp (bytes 8 3 18) (subseq octets 0 3)))
    (multiple-value-bind (code message decoded) (clgrpc.grpc:decode-rpc-status octets)
      (is (= clgrpc.grpc:+invalid-argument+ code))
      (is (string= "bad café" message))
      (is (equalp (mapcar #'clgrpc.grpc:status-detail-type-url details)
                  (mapcar #'clgrpc.grpc:status-detail-type-url decoded)))
      (is (equalp (mapcar #'clgrpc.grpc:status-detail-value details)
                  (mapcar #'clgrpc.grpc:status-detail-value decoded))))
    (signals error (clgrpc.grpc:decode-rpc-status (bytes 26 200)))))

(test a-handlers-rich-error-reaches-the-client
  (let* ((server (clgrpc.grpc:make-server))
         (detail (clgrpc.grpc:make-status-detail "type.googleapis.com/google.rpc.BadRequest" (bytes 10 0)))
         (port (progn (clgrpc.grpc:register-method
                       server "/rich.Svc/Fail"
                       (lambda (request call)
                         (declare (ignore request call))
                         (error 'clgrpc.grpc:grpc-error :code clgrpc.grpc:+invalid-argument+
                                                        :message "no" :details (list detail))))
                      (clgrpc.grpc:server-start server)))
         (channel (clgrpc.grpc:make-channel "127.0.0.1" port)))
    (unwind-protect
         (handler-case (progn (clgrpc.grpc:unary-call channel "/rich.Svc/Fail" (bytes) :timeout 5)
                              (fail "the call succeeded"))
           (clgrpc.grpc:grpc-error (e)
             (is (= clgrpc.grpc:+invalid-argument+ (clgrpc.grpc:grpc-error-code e)))
             (is (equal "no" (clgrpc.grpc:grpc-error-message e)))
             (is (equalp (list (clgrpc.grpc:status-detail-type-url detail) (clgrpc.grpc:status-detail-value detail))
                         (let ((got (first (clgrpc.grpc:grpc-error-details e))))
                           (and got (list (clgrpc.grpc:status-detail-type-url got)
                                          (clgrpc.grpc:status-detail-value got))))))))
      (clgrpc.grpc:channel-close channel)
      (clgrpc.grpc:server-stop server :grace 1))))
