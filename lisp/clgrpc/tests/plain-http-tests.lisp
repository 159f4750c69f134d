;;;; Requests that are not gRPC get a plain HTTP answer after they end.

(in-package #:clgrpc.tests)

(in-suite :clgrpc.grpc)

(defun raw-http-response (peer stream-id)
  "The response on STREAM-ID up to its END_STREAM: (values headers body)."
  (let ((headers nil) (body (make-obuf 64)))
    (loop
      (let ((f (raw-expect peer (lambda (f) (and (= stream-id (clgrpc.http2:frame-stream-id f))
                                                 (member (clgrpc.http2:frame-type f)
                                                         (list clgrpc.http2:+frame-headers+
                                                               clgrpc.http2:+frame-data+)))))))
        (when (symbolp f) (return (values f nil)))
        (if (= (clgrpc.http2:frame-type f) clgrpc.http2:+frame-headers+)
            (setf headers (raw-decode-headers peer f))
            (obuf-write-bytes body (clgrpc.http2:frame-data f) (clgrpc.http2:frame-data-start f)
                              (clgrpc.http2:frame-data-end f)))
        (when (clgrpc.http2:frame-end-stream-p f)
          (return (values headers (utf8-to-string (obuf-contents body)))))))))

(defun http-request-headers (method content-type)
  (append `((":method" . ,method) (":scheme" . "http") (":path" . "/")
            (":authority" . "localhost"))
          (when content-type (list (cons "content-type" content-type)))))

(test plain-http-answers
  (with-raw-grpc (peer)
    ;; a GET, as curl or a browser sends it
    (raw-headers peer 1 :headers (http-request-headers "GET" nil) :end-stream t)
    (multiple-value-bind (headers body) (raw-http-response peer 1)
      (is (equal "415" (header ":status" headers)))
      (is (equal "text/plain; charset=utf-8" (header "content-type" headers)))
      (is (search "gRPC server" body))
      (is (equal (princ-to-string (length (string-to-utf8 body))) (header "content-length" headers))))
    ;; a POST with a body: nothing is answered until the request ends
    (raw-headers peer 3 :headers (http-request-headers "POST" "text/plain"))
    (raw-data peer 3 (filled 1000 65))
    (is (eq :timeout (raw-expect peer (frame-of-type clgrpc.http2:+frame-headers+ 3) 0.3)))
    (raw-data peer 3 (filled 10 66) :end-stream t)
    (is (equal "415" (header ":status" (raw-http-response peer 3))))
    ;; gRPC's content-type with another method
    (raw-headers peer 5 :headers (http-request-headers "GET" "application/grpc") :end-stream t)
    (is (equal "405" (header ":status" (raw-http-response peer 5))))
    ;; the connection still serves gRPC
    (raw-headers peer 7 :headers (grpc-request-headers "/test.Svc/Echo"))
    (raw-data peer 7 (grpc-frame (bytes 3)) :end-stream t)
    (is (equal "0" (header "grpc-status" (raw-grpc-response peer 7))))))
