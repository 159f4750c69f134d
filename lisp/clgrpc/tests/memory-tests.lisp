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

;;; Budgets and stall timeouts (MAKE-SERVER's MAX-CONNECTION-MEMORY and
;;; RECEIVE-STALL-TIMEOUT).

(defmacro with-test-server ((server port &rest options) &body body)
  `(let* ((,server (clgrpc.grpc:make-server ,@options))
          (,port (progn (register-test-methods ,server) (clgrpc.grpc:server-start ,server))))
     (declare (ignorable ,port))
     (unwind-protect (progn ,@body)
       (clgrpc.grpc:server-stop ,server :grace 1))))

(defun echo-requests (peer ids declared body &key end-stream)
  "On each stream of IDS, an Echo request whose gRPC prefix declares
DECLARED octets, followed by BODY octets of it, in DATA frames of 16 KiB;
with END-STREAM, the last ends the stream."
  (let ((b (make-obuf (* (length ids) (+ body 4096)))))
    (dolist (id ids)
      (clgrpc.http2:write-headers-frame
       b id (raw-header-block peer (grpc-request-headers "/test.Svc/Echo")))
      (let ((message (make-octets (+ 5 body))))
        (replace message (octets-of 0 (ldb (byte 8 24) declared) (ldb (byte 8 16) declared)
                                    (ldb (byte 8 8) declared) (ldb (byte 8 0) declared)))
        (loop for start from 0 below (length message) by 16384
              for end = (min (length message) (+ start 16384))
              do (clgrpc.http2:write-data-frame
                  b id (subseq message start end)
                  :end-stream (and end-stream (= end (length message)))))))
    (raw-send peer (obuf-contents b))))

(test a-connection-holds-at-most-its-budget
  ;; Ten streams each send 1 MiB of a message that declares 4 MiB, against
  ;; a budget of 8 MiB a connection: the streams that do not fit fail with
  ;; RESOURCE_EXHAUSTED, the others wait for the rest of their message, a
  ;; client on another connection is answered meanwhile, and everything
  ;; held goes back when the connections close.
  (with-test-server (server port :max-connection-memory (* 8 1024 1024))
    (let ((ids (loop for id from 1 by 2 repeat 10 collect id))
          (attacker (raw-connect-port port)))
      (unwind-protect
           (progn
             (echo-requests attacker ids (* 4 1024 1024) (- (* 1024 1024) 5))
             (let ((outcomes (stream-outcomes attacker ids 3)))
               (is (<= 2 (count "8" outcomes :test #'equal)) "outcomes ~S" outcomes)
               (is (<= 5 (count :timeout outcomes)) "outcomes ~S" outcomes))
             (is (<= (clgrpc.grpc:server-memory-held server) (* 10 1024 1024)))
             (let ((channel (clgrpc.grpc:make-channel "127.0.0.1" port))
                   (big (filled 300000 7)))
               (unwind-protect
                    (is (equalp big (unary channel "Echo" big :timeout 5)))
                 (clgrpc.grpc:channel-close channel))))
        (raw-close attacker))
      (is (loop repeat 100
                thereis (zerop (clgrpc.grpc:server-memory-held server))
                do (sleep 0.05))
          "the server still holds ~D octets" (clgrpc.grpc:server-memory-held server)))))

(test parked-responses-count-against-the-budget
  ;; A client that opens no window asks for six responses of 300 KB: those
  ;; that do not fit parked in a 1 MiB budget wait for window on their
  ;; workers instead of in memory; once the client opens its window, every
  ;; response arrives.
  (with-test-server (server port :max-connection-memory (* 1024 1024)
                                 :max-receive-message-size 400000)
    (let ((peer (raw-connect port))
          (ids '(1 3 5 7 9 11)))
      (unwind-protect
           (progn
             (raw-preface peer (list (cons clgrpc.http2:+settings-initial-window-size+ 0)))
             (dolist (id ids)
               (raw-grpc-request peer id "/test.Svc/Sized" (bytes 30)))
             (sleep 0.5)
             (is (<= (clgrpc.grpc:server-memory-held server) (* 1024 1024))
                 "the server holds ~D octets" (clgrpc.grpc:server-memory-held server))
             (raw-open-windows peer)
             (is (equal (make-list (length ids) :initial-element "0")
                        (stream-outcomes peer ids 10))))
        (raw-close peer)))))

(defun raw-response-data (peer ids &optional (timeout 10))
  "The DATA octets of each stream of IDS, read until each has ended (or
TIMEOUT passes without a frame): a list in the order of IDS."
  (let ((data (make-hash-table)) (ended '()))
    (loop until (subsetp ids ended)
          do (let ((f (raw-expect peer (lambda (f)
                                         (member (clgrpc.http2:frame-type f)
                                                 (list clgrpc.http2:+frame-headers+
                                                       clgrpc.http2:+frame-data+
                                                       clgrpc.http2:+frame-rst-stream+)))
                                  timeout)))
               (when (symbolp f) (return))
               (let ((id (clgrpc.http2:frame-stream-id f)))
                 (when (= (clgrpc.http2:frame-type f) clgrpc.http2:+frame-headers+)
                   ;; Header blocks must be decoded in order, trailers too.
                   (raw-decode-headers peer f))
                 (when (= (clgrpc.http2:frame-type f) clgrpc.http2:+frame-data+)
                   (setf (gethash id data)
                         (concatenate 'octets (gethash id data (make-octets 0))
                                      (subseq (clgrpc.http2:frame-data f)
                                              (clgrpc.http2:frame-data-start f)
                                              (clgrpc.http2:frame-data-end f)))))
                 (when (or (clgrpc.http2:frame-end-stream-p f)
                           (= (clgrpc.http2:frame-type f) clgrpc.http2:+frame-rst-stream+))
                   (push id ended)))))
    (mapcar (lambda (id) (gethash id data (make-octets 0))) ids)))

(defun parked-responses (server)
  "Responses parked for window on SERVER's connections (read without their
locks: for a test that waits for them to settle)."
  (loop for conn being the hash-keys of (clgrpc.grpc::server-connections server)
        sum (length (clgrpc.http2::conn-parked conn))))

(test parked-responses-keep-their-own-octets
  ;; A response parked for window is kept as its encoding, and the one
  ;; worker there is encodes the next response elsewhere, though its
  ;; encoding buffer is small enough to keep (200 KB): each arrives as its
  ;; handler built it.
  (with-test-server (server port :max-handler-threads 1)
    (let ((peer (raw-connect port)))
      (unwind-protect
           (progn
             (raw-preface peer (list (cons clgrpc.http2:+settings-initial-window-size+ 0)))
             (raw-grpc-request peer 1 "/test.Svc/Filled" (bytes 20 1))
             (raw-grpc-request peer 3 "/test.Svc/Filled" (bytes 20 2))
             (sleep 0.5)
             (is (= 2 (parked-responses server)))
             (raw-open-windows peer)
             (loop for body in (raw-response-data peer '(1 3))
                   for value from 1
                   do (is (= 200005 (length body)) "response ~D has ~D octets" value (length body))
                      (is (every (lambda (o) (= o value)) (subseq body (min 5 (length body))))
                          "response ~D holds other octets" value)))
        (raw-close peer)))))

(test a-reset-drops-its-parked-response
  ;; A peer that reads nothing and resets a stream whose response is parked
  ;; gets the response dropped at once, not when the output next drains,
  ;; which it may put off for ever while it resets more.
  (with-test-server (server port)
    (let ((peer (raw-connect port)))
      (unwind-protect
           (progn
             (raw-preface peer (list (cons clgrpc.http2:+settings-initial-window-size+ 0)))
             (raw-grpc-request peer 1 "/test.Svc/Filled" (bytes 20 1))
             (sleep 0.5)
             (is (= 1 (parked-responses server)))
             (raw-send-obuf peer (lambda (b)
                                   (clgrpc.http2:write-rst-stream-frame b 1 clgrpc.http2:+cancel+)))
             (sleep 0.3)
             (is (= 0 (parked-responses server)))
             (is (zerop (clgrpc.grpc:server-memory-held server))))
        (raw-close peer)))))

;; Three clients that open no window each ask for six responses of 300 KB.
;; Seven fit parked in seven eighths of a 2.5 MiB process budget; workers
;; may wait with more only within the overdraft, an eighth of the process
;; budget (one response here), not four a connection over any number of
;; connections.  The rest fail with RESOURCE_EXHAUSTED, and what is held
;; arrives once the windows open.  Meanwhile a client that reads is served
;; a request of 200 KB: the budget's last eighth is not for parking.
(test responses-waiting-beyond-the-budget-are-bounded-across-connections
  (with-test-server (server port :max-connection-memory (* 1024 1024)
                                 :max-process-memory (* 5/2 1024 1024)
                                 :max-receive-message-size 400000)
    (let ((peers (loop repeat 3 collect (raw-connect port)))
          (ids '(1 3 5 7 9 11))
          (budget (getf (clgrpc.grpc::server-connection-options server) :budget)))
      (unwind-protect
           (progn
             (dolist (peer peers)
               (raw-preface peer (list (cons clgrpc.http2:+settings-initial-window-size+ 0)))
               (dolist (id ids)
                 (raw-grpc-request peer id "/test.Svc/Sized" (bytes 30))))
             (sleep 1)
             (is (<= (clgrpc.http2::memory-budget-overdrawn budget) (* 320 1024))
                 "workers hold ~D octets beyond the budget"
                 (clgrpc.http2::memory-budget-overdrawn budget))
             (let ((channel (clgrpc.grpc:make-channel "127.0.0.1" port))
                   (request (make-octets 200000)))
               (unwind-protect
                    (is (equalp request (unary channel "Echo" request :timeout 5)))
                 (clgrpc.grpc:channel-close channel)))
             (mapc #'raw-open-windows peers)
             (let ((outcomes (loop for peer in peers append (stream-outcomes peer ids 10))))
               (is (every (lambda (o) (member o '("0" "8") :test #'equal)) outcomes)
                   "outcomes ~S" outcomes)
               (is (<= 9 (count "8" outcomes :test #'equal)) "outcomes ~S" outcomes))
             (is (loop repeat 100
                       thereis (zerop (clgrpc.http2::memory-budget-overdrawn budget))
                       do (sleep 0.05))))
        (mapc #'raw-close peers)))))

;; A response larger than the connection's budget and the whole overdraft
;; still reaches a client that reads it: its worker sends it alone.
(test a-response-larger-than-the-overdraft-goes-alone
  (with-test-server (server port :max-connection-memory (* 256 1024)
                                 :max-process-memory (* 1024 1024)
                                 :max-receive-message-size 100000)
    (let ((channel (clgrpc.grpc:make-channel "127.0.0.1" port)))
      (unwind-protect
           (is (= 1000000 (length (unary channel "Sized" (bytes 100) :timeout 10))))
        (clgrpc.grpc:channel-close channel)))))

(test a-message-that-stops-arriving-fails-its-call
  (with-test-server (server port :receive-stall-timeout 1)
    (let ((peer (raw-connect-port port)))
      (unwind-protect
           (progn
             (echo-requests peer '(1) 100 10)
             ;; CANCELLED after the second without an octet.
             (is (equal '("1") (stream-outcomes peer '(1) 5))))
        (raw-close peer)))))

(test a-silent-connection-holding-streams-is-pinged
  (with-test-server (server port :receive-stall-timeout 1 :keepalive-timeout 1)
    (let ((peer (raw-connect-port port)))
      (unwind-protect
           (progn
             (raw-headers peer 1 :headers (grpc-request-headers "/test.Svc/Echo"))
             (is (not (symbolp (raw-expect peer (frame-of-type clgrpc.http2:+frame-ping+) 5))))
             ;; Unanswered, the connection closes.
             (is (eq :eof (raw-expect peer (constantly nil) 5))))
        (raw-close peer)))))

(defun budget-calls (server)
  "Handlers in flight as SERVER's budget counts them (MAX-CALLS)."
  (clgrpc.http2::memory-budget-calls
   (getf (clgrpc.grpc::server-connection-options server) :budget)))

(test header-blocks-in-continuations-count-against-the-budget
  ;; A header block of 96 KiB in CONTINUATION frames, within the largest
  ;; block the connection accepts (144 KiB) but past its 64 KiB budget: the
  ;; connection ends (ENHANCE_YOUR_CALM), and what it held goes back.
  (with-test-server (server port :max-receive-message-size 16384
                                 :max-connection-memory 65536)
    (let ((peer (raw-connect-port port)))
      (unwind-protect
           (progn
             (raw-headers peer 1 :headers (grpc-request-headers "/test.Svc/Echo")
                                 :end-headers nil)
             (dotimes (i 6)
               (raw-send peer (raw-frame-bytes 16384 clgrpc.http2:+frame-continuation+ 0 1
                                               (filled 16384 #x40))))
             (is (equal "ENHANCE_YOUR_CALM" (raw-expect-goaway peer))))
        (raw-close peer)))
    (let ((channel (clgrpc.grpc:make-channel "127.0.0.1" port)))
      (unwind-protect (is (equalp (bytes 1 2) (unary channel "Echo" (bytes 1 2) :timeout 5)))
        (clgrpc.grpc:channel-close channel)))
    (is (loop repeat 100
              thereis (zerop (clgrpc.grpc:server-memory-held server))
              do (sleep 0.05))
        "the server still holds ~D octets" (clgrpc.grpc:server-memory-held server))))

(test decoded-headers-are-charged-as-the-heap-holds-them
  ;; A request whose 10,000-character header value waits for its message:
  ;; decoded, it takes four octets a character, and the budget says so.
  (with-test-server (server port)
    (let ((peer (raw-connect-port port)))
      (unwind-protect
           (progn
             (raw-headers peer 1 :headers (grpc-request-headers
                                           "/test.Svc/Echo"
                                           (list (cons "x-big" (make-string 10000
                                                                            :initial-element #\a)))))
             (is (loop repeat 100
                       thereis (<= 40000 (clgrpc.grpc:server-memory-held server))
                       do (sleep 0.05))
                 "the server holds ~D octets for the headers"
                 (clgrpc.grpc:server-memory-held server)))
        (raw-close peer)))))

(test queued-empty-messages-count-against-the-budget
  ;; A handler that reads one message and then no more, sent 2,000 empty
  ;; ones: each costs the server its queue entries, so within a 64 KiB
  ;; budget the call fails RESOURCE_EXHAUSTED instead of queueing them all.
  (with-test-server (server port :max-receive-message-size 16384
                                 :max-connection-memory 65536)
    (let ((peer (raw-connect-port port)))
      (unwind-protect
           (progn
             (raw-grpc-request peer 1 "/test.Svc/ReadOneThenSleep" (bytes 1) :end-stream nil)
             (let ((empty (grpc-frame (make-octets 0)))
                   (b (make-obuf 16384)))
               (dotimes (i 2000)
                 (clgrpc.http2:write-data-frame b 1 empty))
               (raw-send peer (obuf-contents b)))
             (is (equal '("8") (stream-outcomes peer '(1) 5))))
        (raw-close peer)))))

(test a-message-stalling-after-a-large-one-still-fails-its-call
  ;; A large message in several frames, read by the handler, then a second
  ;; message that stops arriving: the timer the first armed watches it.
  (with-test-server (server port :receive-stall-timeout 1)
    (let ((peer (raw-connect-port port)))
      (unwind-protect
           (progn
             (raw-headers peer 1 :headers (grpc-request-headers "/test.Svc/StreamWhere"))
             (let ((message (grpc-frame (filled 40000 3))))
               (loop for start from 0 below (length message) by 16384
                     do (raw-data peer 1 (subseq message start
                                                 (min (length message) (+ start 16384))))))
             (sleep 0.3)
             (raw-data peer 1 (subseq (grpc-frame (filled 100 4)) 0 20))
             (is (equal '("1") (stream-outcomes peer '(1) 5))))
        (raw-close peer)))))

(test work-the-executor-refuses-gives-its-slots-back
  ;; Once the executor is shut down, a request's handler can never run: the
  ;; connection closes, and the call's slot goes back to the process count.
  (with-test-server (server port)
    (clgrpc.util:shutdown-executor (clgrpc.grpc::server-executor server) :timeout 2)
    (let ((peer (raw-connect-port port)))
      (unwind-protect
           (progn
             (raw-grpc-request peer 1 "/test.Svc/Echo" (bytes 1))
             (raw-expect peer (constantly nil) 2))
        (raw-close peer)))
    (is (loop repeat 40 thereis (zerop (budget-calls server)) do (sleep 0.05))
        "~D calls still counted" (budget-calls server))))

(test a-header-block-past-a-full-process-budget-refuses-only-its-stream
  ;; Others have filled the process's budget: a peer within its own
  ;; connection's budget that sends a header block in CONTINUATION frames
  ;; has that stream refused, as any new stream is then, and keeps its
  ;; connection.
  (with-test-server (server port)
    (let* ((budget (getf (clgrpc.grpc::server-connection-options server) :budget))
           (full (clgrpc.http2::memory-budget-process-octets budget))
           (peer (raw-connect-port port)))
      (sb-ext:atomic-incf (clgrpc.http2::memory-budget-held budget) full)
      (unwind-protect
           (let ((block (raw-header-block peer (grpc-request-headers
                                                "/test.Svc/Echo"
                                                (list (cons "x-big" (make-string
                                                                     40000
                                                                     :initial-element #\a)))))))
             (raw-send-obuf peer (lambda (b)
                                   (clgrpc.http2:write-headers-frame
                                    b 1 (subseq block 0 16384) :end-headers nil)))
             (loop for start from 16384 below (length block) by 16384
                   for end = (min (length block) (+ start 16384))
                   do (raw-send peer (raw-frame-bytes (- end start)
                                                      clgrpc.http2:+frame-continuation+
                                                      (if (= end (length block))
                                                          clgrpc.http2:+flag-end-headers+
                                                          0)
                                                      1 (subseq block start end))))
             (is (equal "REFUSED_STREAM" (raw-expect-rst peer 1)))
             (sb-ext:atomic-decf (clgrpc.http2::memory-budget-held budget) full)
             (raw-grpc-request peer 3 "/test.Svc/Echo" (bytes 4))
             (is (equal '("0") (stream-outcomes peer '(3) 5))))
        (raw-close peer)))))

(test the-heap-guard-collects-in-full-when-the-heap-fills
  ;; Past the guard's limit (here, any heap at all), a collection leads the
  ;; guard to run a full one, and it does not run again until the heap
  ;; has grown by an eighth of its size since.
  (clgrpc.util:ensure-heap-guard)
  (let ((before clgrpc.util::*heap-guard-collections*))
    (setf clgrpc.util::*heap-guard-limit* 0
          clgrpc.util::*heap-after-full-collection* 0)
    (unwind-protect
         (progn
           (sb-ext:gc)
           (is (loop repeat 100
                     thereis (> clgrpc.util::*heap-guard-collections* before)
                     do (sleep 0.02))
               "no full collection followed")
           (let ((after clgrpc.util::*heap-guard-collections*))
             (sb-ext:gc)
             (sleep 0.3)
             (is (= after clgrpc.util::*heap-guard-collections*)
                 "the guard collected again with the heap barely grown")))
      (setf clgrpc.util::*heap-guard-limit* nil
            clgrpc.util::*heap-after-full-collection* 0))))
