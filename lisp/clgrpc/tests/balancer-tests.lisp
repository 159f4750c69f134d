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
    ;; As gRPC names targets canonically (grpc.target of the metrics).
    (is (equal '("dns:///localhost:50051" "dns:///localhost:50051" "dns:///localhost:50051"
                 "ipv4:127.0.0.1:80" "unix:///tmp/s.sock")
               (mapcar #'clgrpc.grpc::canonical-target
                       '("localhost:50051" "dns:localhost:50051" "dns:///localhost:50051"
                         "ipv4:127.0.0.1:80" "unix:///tmp/s.sock"))))
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
             ;; It comes back on its port: once its backoff has passed (about a
             ;; second, longer on a loaded machine) a pick connects it again,
             ;; and it takes calls.
             (setf (second servers) (start-identified-server 2 (second ports)))
             (is (loop repeat 1000
                       thereis (progn (who channel)
                                      (every #'clgrpc.grpc::%ready-p (clgrpc.grpc::channel-subchannels channel)))
                       do (sleep 0.01)))
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

;;; A balancer decides to connect a subchannel, then connects it on another
;;; thread; a connect that fails in between starts a backoff the late
;;; connect must heed.  Here the failure is noted first, as that thread
;;; would find it.
(test a-subchannel-picked-before-its-connect-failed-waits-out-its-backoff
  (let* ((listener (clgrpc.net:tcp-listen "127.0.0.1" 0))
         (sub (clgrpc.grpc:make-channel "127.0.0.1" (clgrpc.net:socket-local-port listener))))
    (unwind-protect
         (progn
           (sb-thread:with-mutex ((clgrpc.grpc::channel-lock sub))
             (clgrpc.grpc::%note-failure sub "connection refused")
             ;; Far off, whatever the jitter and however slow the machine.
             (setf (clgrpc.grpc::channel-retry-after-us sub) (+ (clgrpc.util:now-us) 60000000)))
           (let ((status (status-of (lambda () (clgrpc.grpc::direct-connection sub nil nil t)))))
             (is (equal "UNAVAILABLE" (first status)) "~S" status)
             (is (search "connection refused" (or (second status) "")) "~S" status))
           (is (eq :transient-failure (clgrpc.grpc:channel-connectivity-state sub)))
           (is (null (clgrpc.grpc::channel-conn sub)) "no connect was made during the backoff")
           ;; Once the backoff has passed, the same call connects.
           (setf (clgrpc.grpc::channel-retry-after-us sub) 0)
           (is (clgrpc.grpc::direct-connection sub nil nil t)))
      (clgrpc.grpc:channel-close sub)
      (clgrpc.net:socket-close listener))))

(test a-server-that-never-sends-settings-fails-a-call-without-a-deadline
  ;; It accepts TCP and never speaks HTTP/2: the connection is given up
  ;; after the connect timeout, not waited on for ever.
  (let ((mute (clgrpc.net:tcp-listen "127.0.0.1" 0))
        (clgrpc.grpc:*connect-timeout* 1))
    (let ((channel (clgrpc.grpc:make-channel "127.0.0.1" (clgrpc.net:socket-local-port mute)))
          (start (get-internal-real-time)))
      (unwind-protect
           (let ((status (status-of (lambda () (clgrpc.grpc:unary-call channel "/lb.Svc/Who" (bytes))))))
             (is (equal "UNAVAILABLE" (first status)) "~S" status)
             (is (search "SETTINGS" (or (second status) "")) "~S" status)
             (is (< (- (get-internal-real-time) start) (* 5 internal-time-units-per-second))))
        (clgrpc.grpc:channel-close channel)
        (clgrpc.net:socket-close mute)))))

(test the-service-config-chooses-the-balancing-policy
  (let ((servers '()) (ports '()))
    (dolist (id '(1 2 3))
      (multiple-value-bind (server port) (start-identified-server id)
        (push server servers) (push port ports)))
    (setf ports (nreverse ports))
    (flet ((spread (&rest options)
             (let ((channel (apply #'clgrpc.grpc:make-target-channel
                                   (format nil "ipv4:~{127.0.0.1:~D~^,~}" ports) options)))
               (unwind-protect
                    (progn (who channel)
                           ;; Wait for round_robin to connect every address.
                           (loop repeat 200
                                 until (every #'clgrpc.grpc::%ready-p (clgrpc.grpc::channel-subchannels channel))
                                 do (sleep 0.01))
                           (tally channel 30))
                 (clgrpc.grpc:channel-close channel)))))
      (unwind-protect
           (progn
             ;; The first entry clgrpc has is taken; an unknown one before it is passed over.
             (is (equal '(0 10 10 10)
                        (spread :service-config "{\"loadBalancingConfig\": [{\"grpclb\": {}}, {\"round_robin\": {}}]}")))
             ;; The older field, matched whatever its case.
             (is (equal '(0 10 10 10) (spread :service-config "{\"loadBalancingPolicy\": \"ROUND_ROBIN\"}")))
             ;; The channel's own argument wins over the config.
             (is (equal '(0 30 0 0) (spread :lb-policy :pick-first
                                            :service-config "{\"loadBalancingConfig\": [{\"round_robin\": {}}]}")))
             (is (equal '(0 30 0 0) (spread)))
             ;; pick_first shuffling its addresses: one server takes every
             ;; call, not always the first (one in 3^8 runs would see it).
             (let ((chosen (loop repeat 8
                                 collect (let ((counts (spread :service-config "{\"loadBalancingConfig\": [{\"pick_first\": {\"shuffleAddressList\": true}}]}")))
                                           (is (= 30 (reduce #'max counts)))
                                           (position 30 counts)))))
               (is (< 1 (length (remove-duplicates chosen))) "pick_first shuffled chose ~S" chosen)))
        (dolist (s servers) (ignore-errors (clgrpc.grpc:server-stop s :grace 1)))))
    (dolist (bad '("{\"loadBalancingConfig\": [{\"xds_cluster_impl\": {}}]}"
                   "{\"loadBalancingConfig\": {\"round_robin\": {}}}"
                   "{\"loadBalancingConfig\": [{\"round_robin\": {}, \"pick_first\": {}}]}"
                   "{\"loadBalancingConfig\": [{\"pick_first\": {\"shuffleAddressList\": 1}}]}"
                   "{\"loadBalancingPolicy\": 3}"))
      (is (typep (nth-value 1 (ignore-errors (clgrpc.grpc:parse-service-config bad)))
                 'clgrpc.grpc:service-config-error)
          "~S" bad))))

(test a-name-is-resolved-again-when-its-addresses-fail
  ;; A name whose only address moves from the first server to the second.
  (multiple-value-bind (first-server first-port) (start-identified-server 1)
    (multiple-value-bind (second-server second-port) (start-identified-server 2)
      (let* ((answer (list (list (cons #(127 0 0 1) first-port))))
             (asked (list 0))
             (clgrpc.grpc:*re-resolution-interval* 0)
             (channel (clgrpc.grpc:make-target-channel
                       "dns:///moving.test:80" :lb-policy :round-robin
                       :resolver (lambda (host port)
                                   (assert (and (string= host "moving.test") (= port 80)))
                                   (sb-ext:atomic-incf (car asked))
                                   (car answer)))))
        (unwind-protect
             (progn
               (is (equal '(0 10 0 0) (tally channel 10)))
               (is (= 1 (car asked)) "resolved again while its address answered")
               ;; A call in flight on the old address when it goes.
               (setf (car answer) (list (cons #(127 0 0 1) second-port)))
               (clgrpc.grpc:server-stop first-server :grace 1)
               ;; The failure has the name resolved again; calls go to the new address.
               (is (loop repeat 200
                         thereis (eql 2 (who channel))
                         do (sleep 0.01)))
               (is (equal '(0 0 10 0) (tally channel 10)))
               (is (<= 2 (car asked)))
               (is (= 1 (length (clgrpc.grpc::channel-subchannels channel))))
               ;; A resolution that finds nothing keeps the list.
               (setf (car answer) nil)
               (clgrpc.grpc::re-resolve-soon channel)
               (sleep 0.2)
               (is (equal '(0 0 10 0) (tally channel 10))))
          (clgrpc.grpc:channel-close channel)
          (clgrpc.grpc:server-stop second-server :grace 1)
          (ignore-errors (clgrpc.grpc:server-stop first-server :grace 0)))))))

(test a-retired-address-finishes-its-calls
  (let* ((server (clgrpc.grpc:make-server))
         (release (sb-thread:make-semaphore))
         (port (progn (clgrpc.grpc:register-method server "/lb.Svc/Hold"
                                                   (lambda (request call)
                                                     (declare (ignore call))
                                                     (sb-thread:wait-on-semaphore release :timeout 5)
                                                     request))
                      (clgrpc.grpc:server-start server)))
         (answer (list (list (cons #(127 0 0 1) port))))
         (channel (clgrpc.grpc:make-target-channel "dns:///held.test:80"
                                                   :resolver (lambda (host port)
                                                               (declare (ignore host port))
                                                               (car answer)))))
    (unwind-protect
         (let* ((result nil)
                (caller (sb-thread:make-thread
                         (lambda ()
                           (setf result (status-of (lambda ()
                                                     (clgrpc.grpc:unary-call channel "/lb.Svc/Hold" (bytes 7)
                                                                             :timeout 5))))))))
           (sleep 0.3)
           ;; The name now has another address: the held call's goes.
           (multiple-value-bind (other other-port) (start-identified-server 2)
             (unwind-protect
                  (progn
                    (setf (car answer) (list (cons #(127 0 0 1) other-port)))
                    (let ((clgrpc.grpc:*re-resolution-interval* 0))
                      (clgrpc.grpc::re-resolve-soon channel))
                    (is (loop repeat 100
                              thereis (eql 2 (who channel))
                              do (sleep 0.01)))
                    (sb-thread:signal-semaphore release)
                    (sb-thread:join-thread caller)
                    ;; The call on the retired address was answered, not cut off.
                    (is (eq :ok result) "~S" result))
               (clgrpc.grpc:server-stop other :grace 1))))
      (clgrpc.grpc:channel-close channel)
      (clgrpc.grpc:server-stop server :grace 1))))
