;;;; Client keepalive against clgrpc's own server and its enforcement
;;;; policy: pings only while calls are open unless allowed without, and a
;;;; server's too_many_pings doubling the interval.  The same against
;;;; grpc-go's server, and a peer that stops answering, are tested in
;;;; go/features.

(in-package #:clgrpc.tests)

(def-suite :clgrpc.keepalive :in :clgrpc)
(in-suite :clgrpc.keepalive)

(defun channel-keepalive-seconds (channel)
  (/ (clgrpc.grpc::channel-keepalive-time-us channel) 1d6))

(test the-keepalive-floor-is-grpc-gos
  (let ((channel (clgrpc.grpc:make-channel "127.0.0.1" 1 :keepalive-time 1)))
    (is (= 10 (channel-keepalive-seconds channel))))
  (is (null (clgrpc.grpc::channel-keepalive-time-us (clgrpc.grpc:make-channel "127.0.0.1" 1)))))

(test too-many-pings-doubles-the-clients-keepalive-time
  ;; The server allows a ping a second; the client pings every 0.2 s of
  ;; silence while a call sleeps, so the server ends the connection
  ;; (GOAWAY ENHANCE_YOUR_CALM too_many_pings) and the next connection
  ;; pings every 0.4 s.
  (let ((clgrpc.grpc:*client-keepalive-floor* 0.1))
    (with-grpc (ch :keepalive-min-time 1 :channel-args (:keepalive-time 0.2))
      (let ((status (status-of (lambda () (unary ch "Sleep" (bytes) :timeout 5)))))
        (is (equal "UNAVAILABLE" (first status)) "the call on the connection ended: ~S" status))
      (is (equalp (bytes) (unary ch "Echo" (bytes) :timeout 5)))
      (is (= 0.4d0 (channel-keepalive-seconds ch))))))

(test a-client-pings-without-calls-only-when-allowed
  (let ((clgrpc.grpc:*client-keepalive-floor* 0.1))
    (dolist (without '(nil t))
      (with-grpc (ch :channel-args (:keepalive-time 0.1 :keepalive-without-calls without))
        (unary ch "Echo" (bytes) :timeout 5)
        (let* ((conn (clgrpc.grpc::channel-conn ch))
               (before (clgrpc.http2::conn-ping-acks conn)))
          (sleep 0.6)
          (if without
              (is (< before (clgrpc.http2::conn-ping-acks conn)) "no ping without calls, though allowed")
              (is (= before (clgrpc.http2::conn-ping-acks conn)) "pinged without calls")))))))
