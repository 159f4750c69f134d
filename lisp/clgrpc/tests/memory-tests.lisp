;;;; What a peer can make the server hold in its heap, measured by the heap
;;;; (SB-KERNEL:DYNAMIC-USAGE after a full collection), not by RSS, which
;;;; fresh untouched pages never move.

(in-package #:clgrpc.tests)

(def-suite :clgrpc.memory :in :clgrpc)
(in-suite :clgrpc.memory)

(defun heap-octets ()
  "The heap in use after a full collection."
  (sb-ext:gc :full t)
  (sb-kernel:dynamic-usage))

(test declared-lengths-are-not-allocations
  ;; 300 streams, each a request whose gRPC prefix declares 4 MiB followed
  ;; by one octet of body: the server holds what arrived, not what was
  ;; declared (300 x 4 MiB would be 1.2 GiB), and still answers a call.
  (with-raw-grpc (peer)
    (let ((before (heap-octets))
          (b (make-obuf 65536)))
      (loop for id from 1 by 2 repeat 300
            do (clgrpc.http2:write-headers-frame
                b id (raw-header-block peer (grpc-request-headers "/test.Svc/Echo")))
               (clgrpc.http2:write-data-frame b id (octets-of 0 0 64 0 0 7)))
      (raw-send peer (obuf-contents b))
      ;; Each stream's one octet has arrived once an answer to a later
      ;; stream has: the reactor reads in order.
      (raw-grpc-request peer 601 "/test.Svc/Echo" (bytes 5))
      (is (not (symbolp (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+ 601) 10))))
      (let ((grown (- (heap-octets) before)))
        (is (< grown (* 64 1024 1024)) "the heap grew by ~D octets" grown)))))
