;;;; Channels over several addresses: a subchannel (a channel of its own)
;;;; for each address a target names (target.lisp), picked by a load
;;;; balancing policy, each with its connectivity state and gRPC's
;;;; connection backoff (doc/connection-backoff.md, doc/load-balancing.md):
;;;;
;;;;   :pick-first   the first address that connects, kept until its
;;;;                 connection fails, then the next (in order, wrapping);
;;;;   :round-robin  each new stream on the next address in turn whose
;;;;                 connection is up or can be made.
;;;;
;;;; A subchannel whose connect failed is in TRANSIENT_FAILURE and skipped
;;;; until its backoff (1 s, then 1.6 times longer each failure, at most
;;;; 120 s, jittered by 20%) has passed; then a pick tries it again, so a
;;;; server that comes back rejoins.  Connecting is done by the call that
;;;; picks the subchannel, within its deadline.

(in-package #:clgrpc.grpc)

(defconstant +initial-backoff-us+ 1000000)
(defconstant +max-backoff-us+ 120000000)

(defun note-connect-outcome (channel connected)
  "CHANNEL's lock held: its connect attempt succeeded (READY, backoff
reset) or failed (TRANSIENT_FAILURE until the jittered backoff passes)."
  (if connected
      (setf (channel-state channel) :ready
            (channel-backoff-us channel) 0)
      (let ((backoff (if (zerop (channel-backoff-us channel))
                         +initial-backoff-us+
                         (min +max-backoff-us+ (round (* 1.6d0 (channel-backoff-us channel)))))))
        (setf (channel-state channel) :transient-failure
              (channel-backoff-us channel) backoff
              (channel-retry-after-us channel)
              (+ (now-us) (round (* backoff (+ 0.8d0 (random 0.4d0)))))))))

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

(defun balanced-connection (channel stale deadline)
  "A connection of one of CHANNEL's subchannels, as its policy picks:
those backing off are passed over, and one that cannot connect is left
for the next.  UNAVAILABLE when none can take the call."
  (let* ((subs (channel-subchannels channel))
         ;; Those backing off are out of the turn, so the others share it
         ;; evenly meanwhile.
         (candidates (remove-if #'%backing-off-p subs))
         (n (length candidates))
         (round-robin (eq (channel-lb-policy channel) :round-robin))
         (start (cond ((zerop n) 0)
                      (round-robin (mod (sb-ext:atomic-incf (channel-next-pick channel)) n))
                      ;; Pick first: from the one in use, kept until it fails.
                      (t (or (position (svref subs (mod (channel-next-pick channel) (length subs))) candidates)
                             0))))
         (last-error nil))
    (dotimes (i n)
      (let ((sub (svref candidates (mod (+ start i) n))))
        (handler-case
            (let ((conn (direct-connection sub stale deadline)))
              (unless round-robin
                (setf (channel-next-pick channel) (position sub subs)))
              (return-from balanced-connection conn))
          (grpc-error (e)
            (unless (= (grpc-error-code e) +unavailable+)
              (error e))
            (setf last-error e)))))
    (raise-grpc-error +unavailable+ "no address of ~A can take the call~@[: ~A~]"
                      (channel-authority channel) (and last-error (grpc-error-message last-error)))))

(defun make-target-channel (target &rest channel-options &key (lb-policy :pick-first) &allow-other-keys)
  "A channel to TARGET, a gRPC target name (target.lisp): dns:///host:port
(every address the name has), ipv4:, ipv6: or unix: addresses, or
host:port.  LB-POLICY, :PICK-FIRST or :ROUND-ROBIN, picks among the
addresses.  CHANNEL-OPTIONS are MAKE-CHANNEL's; over TLS the server's
certificate must name the target's host (or :SERVER-NAME).  Signals
TARGET-ERROR for a target that names no usable address."
  (check-type lb-policy (member :pick-first :round-robin))
  (multiple-value-bind (addresses authority) (parse-target target)
    (let* ((options (loop for (key value) on channel-options by #'cddr
                          unless (eq key :lb-policy) append (list key value)))
           (tls-name (and (getf options :tls) (not (getf options :server-name))
                          (list :server-name (%authority-host authority))))
           (subs (map 'simple-vector
                      (lambda (address)
                        (let ((sub (apply #'make-channel (car address) (cdr address) (append tls-name options))))
                          (setf (channel-authority sub) authority)
                          sub))
                      addresses))
           (channel (apply #'make-channel target 0 (append tls-name options))))
      (setf (channel-subchannels channel) subs
            (channel-lb-policy channel) lb-policy
            (channel-authority channel) (or (getf options :server-name) authority))
      channel)))

(defun %authority-host (authority)
  "The host of an authority HOST:PORT or [IPv6]:PORT."
  (if (and (plusp (length authority)) (char= (char authority 0) #\[))
      (subseq authority 1 (or (position #\] authority) (length authority)))
      (subseq authority 0 (or (position #\: authority :from-end t) (length authority)))))
