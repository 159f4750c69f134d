;;;; Channels over several addresses: a subchannel (a channel of its own)
;;;; for each address a target names (target.lisp), picked by a load
;;;; balancing policy, each with its connectivity state and gRPC's
;;;; connection backoff (doc/connection-backoff.md, doc/load-balancing.md):
;;;;
;;;;   :pick-first   the first address that connects, kept until its
;;;;                 connection fails, then the next (in order, wrapping);
;;;;   :round-robin  connections to every address; each new stream on the
;;;;                 next one in turn among those READY.
;;;;
;;;; A subchannel whose connect failed is in TRANSIENT_FAILURE and skipped
;;;; until its backoff (1 s, then 1.6 times longer each failure, at most
;;;; 120 s, jittered by 20%) has passed; then a pick tries it again, so a
;;;; server that comes back rejoins.  A subchannel is READY once its
;;;; server's SETTINGS arrive; one that closes before them failed to
;;;; connect.  pick_first connects in the call that picks, within its
;;;; deadline; round_robin connects the others on threads of their own.

(in-package #:clgrpc.grpc)

(defconstant +initial-backoff-us+ 1000000)
(defconstant +max-backoff-us+ 120000000)

(defun note-connect-outcome (channel connected)
  "CHANNEL's lock held: its connect attempt made a connection (READY; the
backoff is reset once the server's SETTINGS show it is an HTTP/2 server,
see %USABLE-P's callers) or failed (TRANSIENT_FAILURE until the jittered
backoff passes)."
  (if connected
      (setf (channel-state channel) :ready)
      (%note-failure channel nil)))

(defun %note-failure (channel why)
  "CHANNEL's lock held: a connect failed (WHY, if not already noted)."
  (let ((backoff (if (zerop (channel-backoff-us channel))
                     +initial-backoff-us+
                     (min +max-backoff-us+ (round (* 1.6d0 (channel-backoff-us channel)))))))
    (when why
      (setf (channel-last-failure channel) why))
    (setf (channel-state channel) :transient-failure
          (channel-backoff-us channel) backoff
          (channel-retry-after-us channel)
          (+ (now-us) (round (* backoff (+ 0.8d0 (jitter-random 0.4d0))))))))

(defun %ready-p (sub)
  "SUB has a connection that takes streams and whose server has answered
(its SETTINGS arrived): its backoff is over."
  (sb-thread:with-mutex ((channel-lock sub))
    (let ((conn (channel-conn sub)))
      (when (and (%usable-p conn nil) (clgrpc.http2:connection-peer-settings-seen-p conn))
        (setf (channel-backoff-us sub) 0)
        t))))

(defun %connecting-p (sub)
  "SUB is connecting: a connect is under way, or its connection waits for
the server's SETTINGS."
  (sb-thread:with-mutex ((channel-lock sub))
    (or (channel-connecting sub)
        (let ((conn (channel-conn sub)))
          (and (%usable-p conn nil) (not (clgrpc.http2:connection-peer-settings-seen-p conn)))))))

(defun channel-connectivity-state (channel)
  "CHANNEL's connectivity: :READY (a connection takes streams),
:CONNECTING, :TRANSIENT-FAILURE (its last connect failed and its backoff
has not passed) or :IDLE.  A channel over several addresses is READY if
any of them is, else CONNECTING if any is, else TRANSIENT-FAILURE if all
are, else IDLE."
  (let ((subs (channel-subchannels channel)))
    (if subs
        (let ((states (map 'list #'channel-connectivity-state subs)))
          (cond ((member :ready states) :ready)
                ((member :connecting states) :connecting)
                ((every (lambda (s) (eq s :transient-failure)) states) :transient-failure)
                (t :idle)))
        (sb-thread:with-mutex ((channel-lock channel))
          (cond ((%usable-p (channel-conn channel) nil) :ready)
                ((channel-connecting channel) :connecting)
                ((and (eq (channel-state channel) :transient-failure)
                      (< (now-us) (channel-retry-after-us channel)))
                 :transient-failure)
                (t :idle))))))

(defun %backing-off-p (sub)
  (sb-thread:with-mutex ((channel-lock sub))
    (and (eq (channel-state sub) :transient-failure)
         (not (%usable-p (channel-conn sub) nil))
         (< (now-us) (channel-retry-after-us sub)))))

(defun %failing-p (sub)
  "SUB's last connect failed, or its connection was lost."
  (sb-thread:with-mutex ((channel-lock sub))
    (or (eq (channel-state sub) :transient-failure)
        (let ((conn (channel-conn sub)))
          (and conn (not (%usable-p conn nil)))))))

(defun %connect-idle-subchannels (subs)
  "round_robin connects every address, as gRPC's does: a thread for each
subchannel without a connection that is neither connecting nor backing
off (its outcome is noted on the subchannel; nothing waits for it)."
  (loop for sub across subs
        do (when (sb-thread:with-mutex ((channel-lock sub))
                   (and (not (channel-connecting sub))
                        (not (channel-closed sub))
                        (not (%usable-p (channel-conn sub) nil))
                        (not (and (eq (channel-state sub) :transient-failure)
                                  (< (now-us) (channel-retry-after-us sub))))))
             (sb-thread:make-thread (lambda (sub) (ignore-errors (direct-connection sub nil nil t)))
                                    :name "grpc subchannel connect" :arguments (list sub)))))

(declaim (ftype function re-resolve-soon re-resolution-due-p))

(defconstant +pick-poll-us+ 20000
  "How often a pick that found every address connecting looks again.")

(defun balanced-connection (channel stale deadline)
  "A connection of one of CHANNEL's subchannels, as its policy picks, as
gRPC's pickers do: among the READY ones when there are any (round_robin
in turn, pick_first the one in use, else the first).  With none READY, the
call connects one that is neither backing off nor being connected by
another call, in order; if all that remain are connecting, it waits for
one of them (until its deadline, or the connect timeout).  UNAVAILABLE
when every address is failing."
  (let* ((round-robin (eq (channel-lb-policy channel) :round-robin))
         (give-up (or deadline (+ (now-us) (round (* *connect-timeout* 1000000)))))
         (last-error nil)
         (first-look t))
    (when round-robin
      (%connect-idle-subchannels (channel-subchannels channel)))
    (loop
      (when (channel-closed channel)
        (raise-grpc-error +unavailable+ "channel closed"))
      (let* ((subs (channel-subchannels channel))
             (ready (remove-if-not #'%ready-p subs)))
        (when (and (shiftf first-look nil)
                   (or round-robin (zerop (length ready)))
                   (re-resolution-due-p channel)
                   (some #'%failing-p subs))
          ;; Failing addresses: the name may have others now.
          (re-resolve-soon channel))
        (when (plusp (length ready))
          (let ((sub (if round-robin
                         (svref ready (mod (sb-ext:atomic-incf (channel-next-pick channel)) (length ready)))
                         (let ((current (svref subs (mod (channel-next-pick channel) (length subs)))))
                           (if (find current ready) current (svref ready 0))))))
            (handler-case
                (let ((conn (direct-connection sub stale deadline t)))
                  (unless round-robin
                    (setf (channel-next-pick channel) (position sub subs)))
                  (return-from balanced-connection conn))
              (grpc-error (e)
                (unless (= (grpc-error-code e) +unavailable+) (error e))
                (setf last-error e))))))
      ;; None READY: connect one that nobody is connecting.
      (let ((connecting nil))
        (loop for sub across (channel-subchannels channel)
              do (cond ((%backing-off-p sub))
                       ((%connecting-p sub) (setf connecting t))
                       (t (handler-case
                              ;; A new connection is READY once its server's
                              ;; SETTINGS arrive; until then it is waited for.
                              (progn (direct-connection sub stale deadline t)
                                     (setf connecting t))
                            (grpc-error (e)
                              (unless (= (grpc-error-code e) +unavailable+) (error e))
                              (setf last-error e))))))
        (when (or (not connecting) (>= (now-us) give-up))
          (if (and connecting deadline)
              (raise-grpc-error +deadline-exceeded+ "deadline exceeded while connecting to ~A"
                                (channel-authority channel))
              (raise-grpc-error +unavailable+ "no address of ~A can take the call~@[: ~A~]"
                                (channel-authority channel)
                                (and last-error (grpc-error-message last-error)))))
        (sleep (/ (min +pick-poll-us+ (max 1 (- give-up (now-us)))) 1d6))))))

(defun make-target-channel (target &rest channel-options
                            &key lb-policy (resolver #'resolve-by-dns) &allow-other-keys)
  "A channel to TARGET, a gRPC target name (target.lisp): dns:///host:port
(every address the name has), ipv4:, ipv6: or unix: addresses, or
host:port.  LB-POLICY, :PICK-FIRST or :ROUND-ROBIN, picks among the
addresses; without it, the service config's load balancing policy does
(pick_first shuffling the addresses when it says so), else :PICK-FIRST.
RESOLVER, called as (resolver host port), gives a DNS name's addresses,
((address . port) ...): the system's (getaddrinfo) unless given.  A name
is resolved again when its addresses fail (resolver.lisp).  The other
CHANNEL-OPTIONS are MAKE-CHANNEL's; over TLS the server's certificate
must name the target's host (or :SERVER-NAME).  Signals TARGET-ERROR for
a target that names no usable address."
  (check-type lb-policy (member nil :pick-first :round-robin))
  (multiple-value-bind (addresses authority re-resolve) (parse-target target resolver)
    (let* ((options (loop for (key value) on channel-options by #'cddr
                          unless (member key '(:lb-policy :resolver)) append (list key value)))
           (tls-name (and (getf options :tls) (not (getf options :server-name))
                          (list :server-name (%authority-host authority))))
           (channel (apply #'make-channel target 0 (append tls-name options)))
           (config (channel-service-config channel))
           (policy (or lb-policy (and config (service-config-lb-policy config)) :pick-first))
           (make-sub (lambda (address)
                       (let ((sub (apply #'make-channel (car address) (cdr address)
                                         ;; The config parsed once, for every subchannel.
                                         :service-config config (append tls-name options))))
                         (setf (channel-authority sub) authority)
                         sub)))
           (shuffle (and (null lb-policy) config (service-config-lb-shuffle config)
                         (eq policy :pick-first)))
           (subs (map 'simple-vector make-sub addresses)))
      (when shuffle
        (%shuffle subs))
      (setf (channel-subchannels channel) subs
            (channel-lb-policy channel) policy
            (channel-authority channel) (or (getf options :server-name) authority)
            (channel-target channel) (canonical-target target)
            (channel-re-resolve channel) re-resolve
            (channel-subchannel-maker channel) make-sub
            (channel-shuffle-addresses channel) shuffle
            (channel-resolved-at-us channel) (now-us))
      channel)))

(defun %shuffle (vector)
  "VECTOR in a random order (Fisher-Yates), in place."
  (loop for i from (1- (length vector)) downto 1
        do (rotatef (svref vector i) (svref vector (jitter-random (1+ i)))))
  vector)

(defun %authority-host (authority)
  "The host of an authority HOST:PORT or [IPv6]:PORT."
  (if (and (plusp (length authority)) (char= (char authority 0) #\[))
      (subseq authority 1 (or (position #\] authority) (length authority)))
      (subseq authority 0 (or (position #\: authority :from-end t) (length authority)))))
