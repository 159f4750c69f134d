;;;; Targets (gRPC's names), and channels balancing over several servers:
;;;; round_robin's spread, pick_first's order, connectivity states, and a
;;;; server that stops and comes back.  Against grpc-go's servers, and over
;;;; Unix sockets: go/features.

(in-package #:clgrpc.tests)

(def-suite :clgrpc.balancer :in :clgrpc)
(in-suite :clgrpc.balancer)

(test targets-resolve-as-grpc-names-them
  (flet ((addresses (target) (clgrpc.grpc:parse-target target)))
    ;; Every address of the name (this host's localhost may have ::1 too).
    (is (member '(#(127 0 0 1) . 50051) (addresses "dns:///localhost:50051") :test #'equalp))
    (is (member '(#(127 0 0 1) . 443) (addresses "localhost") :test #'equalp))
    (is (equalp '((#(127 0 0 1) . 80) (#(127 0 0 2) . 81)) (addresses "ipv4:127.0.0.1:80,127.0.0.2:81")))
    (is (equalp '((#(0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1) . 80)) (addresses "ipv6:[::1]:80")))
    (is (equalp '(((:unix "/tmp/s.sock") . 0)) (addresses "unix:///tmp/s.sock")))
    (is (equalp '(((:unix "rel.sock") . 0)) (addresses "unix:rel.sock")))
    (is (equal "localhost:50051" (nth-value 1 (clgrpc.grpc:parse-target "dns:///localhost:50051"))))
    (dolist (bad '("ipv4:1.2.3:80" "ipv4:127.0.0.1:99999" "dns://8.8.8.8/x:1" "unix:" "unix://rel"
                   "ipv6:[::1:80" "no.such.host.invalid:80"))
      (is (typep (nth-value 1 (ignore-errors (clgrpc.grpc:parse-target bad))) 'clgrpc.grpc:target-error)
          "~S" bad))))

(defun start-identified-server (id &optional (port 0))
  "A server whose /lb.Svc/Who answers ID; (values server port)."
  (let ((server (clgrpc.grpc:make-server)))
    (clgrpc.grpc:register-method server "/lb.Svc/Who" (lambda (request call)
                                                         (declare (ignore request call))
                                                         (bytes id)))
    (values server (clgrpc.grpc:server-start server :port port))))

(defun who (channel)
  (let ((answer (ignore-errors (clgrpc.grpc:unary-call channel "/lb.Svc/Who" (bytes) :timeout 5))))
    (and answer (aref answer 0))))

(defun tally (channel n)
  "How many of N calls each server answered: a list indexed by id (0 for failures)."
  (let ((counts (make-list 4 :initial-element 0)))
    (dotimes (i n counts)
      (incf (nth (or (who channel) 0) counts)))))

(test round-robin-spreads-calls-and-a-server-that-returns-rejoins
  (let ((servers '()) (ports '()))
    (dolist (id '(1 2 3))
      (multiple-value-bind (server port) (start-identified-server id)
        (push server servers) (push port ports)))
    (setf servers (nreverse servers) ports (nreverse ports))
    (let ((channel (clgrpc.grpc:make-target-channel
                    (format nil "ipv4:~{127.0.0.1:~D~^,~}" ports) :lb-policy :round-robin)))
      (unwind-protect
           (progn
             (is (eq :idle (clgrpc.grpc:channel-connectivity-state channel)))
             ;; The first call connects every address.
             (is (who channel))
             (is (loop repeat 200
                       thereis (every #'clgrpc.grpc::%ready-p (clgrpc.grpc::channel-subchannels channel))
                       do (sleep 0.01)))
             (is (equal '(0 10 10 10) (tally channel 30)))
             (is (eq :ready (clgrpc.grpc:channel-connectivity-state channel)))
             ;; Server 2 stops: its share goes to the others, no call fails.
             (clgrpc.grpc:server-stop (second servers) :grace 1)
             (let ((counts (tally channel 30)))
               (is (= 0 (first counts)) "calls failed: ~S" counts)
               (is (= 0 (third counts)) "the stopped server answered: ~S" counts)
               (is (= 30 (+ (second counts) (fourth counts)))))
             ;; It comes back on its port: after its backoff it takes calls again.
             (setf (second servers) (start-identified-server 2 (second ports)))
             (sleep 1.5)
             (let ((counts (tally channel 30)))
               (is (= 0 (first counts)))
               (is (<= 8 (third counts)) "the returned server had ~S" counts)))
        (clgrpc.grpc:channel-close channel)
        (dolist (s servers) (ignore-errors (clgrpc.grpc:server-stop s :grace 1)))))))

(test pick-first-keeps-the-first-address-that-connects
  (multiple-value-bind (down down-port) (start-identified-server 1)
    (clgrpc.grpc:server-stop down :grace 0)
    (multiple-value-bind (second-server second-port) (start-identified-server 2)
      (multiple-value-bind (third-server third-port) (start-identified-server 3)
        (let ((channel (clgrpc.grpc:make-target-channel
                        (format nil "ipv4:127.0.0.1:~D,127.0.0.1:~D,127.0.0.1:~D" down-port second-port third-port))))
          (unwind-protect
               (progn
                 (is (equal '(0 0 10 0) (tally channel 10)))
                 (clgrpc.grpc:server-stop second-server :grace 1)
                 (is (equal '(0 0 0 10) (tally channel 10))))
            (clgrpc.grpc:channel-close channel)
            (clgrpc.grpc:server-stop third-server :grace 1)))))))

(test a-target-with-no-server-fails-fast-and-reports-transient-failure
  (multiple-value-bind (down port) (start-identified-server 1)
    (clgrpc.grpc:server-stop down :grace 0)
    (let ((channel (clgrpc.grpc:make-target-channel (format nil "dns:///localhost:~D" port))))
      (unwind-protect
           (progn
             (is (equal "UNAVAILABLE" (first (status-of (lambda () (clgrpc.grpc:unary-call channel "/lb.Svc/Who" (bytes) :timeout 5))))))
             (is (eq :transient-failure (clgrpc.grpc:channel-connectivity-state channel))))
        (clgrpc.grpc:channel-close channel)))))

(test an-address-that-never-answers-holds-up-no-call
  ;; One address accepts TCP and never speaks HTTP/2, another closes each
  ;; connection at once; the third is a server.  Every call is answered by
  ;; the server, at once, and the closing address is retried only after
  ;; its backoff.
  (let* ((mute (clgrpc.net:tcp-listen "127.0.0.1" 0))
         (closer (clgrpc.net:tcp-listen "127.0.0.1" 0))
         (closed (list 0))
         (closer-thread (sb-thread:make-thread
                         (lambda ()
                           (loop (let ((s (ignore-errors (clgrpc.net:tcp-accept closer))))
                                   (unless s (return))
                                   (sb-ext:atomic-incf (car closed))
                                   (clgrpc.net:socket-close s)))))))
    (multiple-value-bind (server port) (start-identified-server 3)
      (dolist (policy '(:round-robin :pick-first))
        (let ((channel (clgrpc.grpc:make-target-channel
                        (format nil "ipv4:127.0.0.1:~D,127.0.0.1:~D,127.0.0.1:~D"
                                (clgrpc.net:socket-local-port mute) (clgrpc.net:socket-local-port closer) port)
                        :lb-policy policy)))
          (setf (car closed) 0)
          (unwind-protect
               (let ((start (get-internal-real-time))
                     (answers (loop repeat 20
                                    collect (ignore-errors (aref (clgrpc.grpc:unary-call channel "/lb.Svc/Who" (bytes)
                                                                                         :timeout 2)
                                                                 0)))))
                 (is (every (lambda (a) (eql a 3)) answers) "~S: ~S" policy answers)
                 (is (< (- (get-internal-real-time) start) (* 3 internal-time-units-per-second)) "~S" policy)
                 (is (<= (car closed) 2) "~S: the closing address was connected ~D times" policy (car closed)))
            (clgrpc.grpc:channel-close channel))))
      (clgrpc.grpc:server-stop server :grace 1))
    (clgrpc.net:socket-close mute)
    (ignore-errors (clgrpc.net:fd-shutdown (clgrpc.net:socket-fd closer)))
    (clgrpc.net:socket-close closer)
    (sb-thread:join-thread closer-thread :default nil :timeout 2)))
