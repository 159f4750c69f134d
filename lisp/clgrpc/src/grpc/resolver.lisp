;;;; Resolving a channel's name again, as gRPC's DNS resolver does: when
;;;; the balancing policy finds its subchannels failing (no address READY,
;;;; or round_robin's addresses backing off), at most once every
;;;; *RE-RESOLUTION-INTERVAL* seconds, on a thread of its own so that no
;;;; call waits for the DNS.  The new address list replaces the old:
;;;; subchannels of addresses still listed are kept with their
;;;; connections, new addresses get subchannels, and those no longer
;;;; listed are retired: they take no new calls, and their connections are
;;;; sent GOAWAY, so that the calls on them finish first.  A resolution
;;;; that fails, or finds no address, leaves the list as it was.

(in-package #:clgrpc.grpc)

(defparameter *re-resolution-interval* 30
  "The fewest seconds between two resolutions of a channel's name: gRPC's
DNS resolver's minimum.")

(defun %same-address-p (sub address)
  (and (equalp (channel-host sub) (car address))
       (eql (channel-port sub) (cdr address))))

(defun %retire-subchannel (sub)
  "SUB's address is gone: no new call picks it, and its connection closes
once the calls on it end.  CHANNEL-CLOSE of its parent closes it."
  (let ((conn (sb-thread:with-mutex ((channel-lock sub))
                (setf (channel-closed sub) t)
                (sb-thread:condition-broadcast (channel-cv sub))
                (channel-conn sub))))
    (when (and conn (not (clgrpc.http2:connection-closed-p conn)))
      (clgrpc.http2:connection-send-goaway conn))))

(defun %replace-addresses (channel addresses)
  "CHANNEL's subchannels become those of ADDRESSES, keeping the ones whose
address is still there."
  (let ((retired '()) (made '()))
    (sb-thread:with-mutex ((channel-lock channel))
      (let* ((old (channel-subchannels channel))
             (new (map 'simple-vector
                       (lambda (address)
                         (or (find-if (lambda (sub) (%same-address-p sub address)) old)
                             (let ((sub (funcall (channel-subchannel-maker channel) address)))
                               (push sub made)
                               sub)))
                       addresses)))
        (if (channel-closed channel)
            (setf retired made)
            (setf retired (remove-if (lambda (sub) (find sub new)) (coerce old 'list))
                  (channel-subchannels channel) new
                  ;; Kept until their connections close, for CHANNEL-CLOSE.
                  (channel-retired channel)
                  (append retired (remove-if #'%retirement-over-p (channel-retired channel)))))))
    (mapc #'%retire-subchannel retired)))

(defun %retirement-over-p (sub)
  "SUB was retired and its connection has closed (or it had none)."
  (let ((conn (sb-thread:with-mutex ((channel-lock sub)) (channel-conn sub))))
    (or (null conn) (clgrpc.http2:connection-closed-p conn))))

(defun %resolve-again (channel)
  (unwind-protect
       (handler-case
           (let ((addresses (funcall (channel-re-resolve channel))))
             (when addresses
               (%replace-addresses channel (if (channel-shuffle-addresses channel)
                                               (coerce (%shuffle (coerce addresses 'simple-vector)) 'list)
                                               addresses))))
         (target-error ())
         ;; A resolver of the application's that fails, or answers what is
         ;; not an address: the list stays, and the process too.
         (error (e)
           (log-line "resolving ~A again failed: ~A" (channel-authority channel) e)))
    (sb-thread:with-mutex ((channel-lock channel))
      (setf (channel-resolving channel) nil
            (channel-resolved-at-us channel) (now-us)))))

(defun re-resolution-due-p (channel)
  "Whether CHANNEL's name may be resolved again now: it is a name, no
resolution is under way, and the last was *RE-RESOLUTION-INTERVAL* ago.
Read without the lock: a cheap first look."
  (and (channel-re-resolve channel)
       (not (channel-resolving channel))
       (>= (- (now-us) (channel-resolved-at-us channel))
           (round (* *re-resolution-interval* 1000000)))))

(defun re-resolve-soon (channel)
  "CHANNEL's subchannels fail: resolve its name again, unless it names
literal addresses, a resolution is under way, or the last one was less
than *RE-RESOLUTION-INTERVAL* ago."
  (when (re-resolution-due-p channel)
    (when (sb-thread:with-mutex ((channel-lock channel))
            ;; Again under the lock: two picks may have looked at once.
            (when (and (re-resolution-due-p channel) (not (channel-closed channel)))
              (setf (channel-resolving channel) t)))
      (handler-case (sb-thread:make-thread #'%resolve-again :name "grpc resolver"
                                                            :arguments (list channel))
        (error ()
          ;; Out of threads: the next failure tries again.
          (sb-thread:with-mutex ((channel-lock channel))
            (setf (channel-resolving channel) nil)))))))
