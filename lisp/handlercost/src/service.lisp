;;;; The handler-cost service (go/handlercost/wire): three raw unary methods.
;;;;
;;;;   Fast   answers at once;
;;;;   Sleep  waits N microseconds without a CPU, like a handler waiting on I/O;
;;;;   Spin   keeps its CPU busy until N microseconds of wall time have passed.
;;;;
;;;; A request is N as 4 octets, big-endian and unsigned (none: N = 0), N at
;;;; most +MAX-MICROS+; the response echoes the request.  Any other request is
;;;; answered with INVALID_ARGUMENT.

(defpackage #:handlercost
  (:use #:cl)
  (:documentation "The handler-cost service on clgrpc: Fast, Sleep and Spin, raw octets.")
  (:export #:register-handlers #:request-micros #:+max-micros+))

(in-package #:handlercost)

(defconstant +max-micros+ 60000000
  "The longest a request may ask for: a minute, as the Go server's limit.")

(defun request-micros (request)
  "N, in microseconds, of REQUEST's octets, or a GRPC-ERROR INVALID_ARGUMENT."
  (let ((n (case (length request)
             (0 0)
             (4 (logior (ash (aref request 0) 24) (ash (aref request 1) 16)
                        (ash (aref request 2) 8) (aref request 3)))
             (t (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+invalid-argument+
                                              "a request is 4 octets or none, got ~D"
                                              (length request))))))
    (when (> n +max-micros+)
      (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+invalid-argument+
                                    "~D us is over the limit of ~D" n +max-micros+))
    n))

(defun spin (micros)
  "Keep this CPU busy until MICROS of wall time have passed."
  (let ((end (+ (clgrpc.util:now-us) micros)))
    (loop while (< (clgrpc.util:now-us) end))))

(defun handler (work)
  "A unary handler that calls WORK with the request's N and answers with the
request's octets."
  (lambda (request call)
    (declare (ignore call))
    (funcall work (request-micros request))
    request))

(defun register-handlers (server &key fast-inline)
  "Register Fast, Sleep and Spin with SERVER, with clgrpc's raw codec.
FAST-INLINE declares Fast :INLINE, as a tuned server would: it never
blocks and takes microseconds, so it may run on the reactor that read it.
Sleep and Spin never are: they block or compute."
  (clgrpc.grpc:register-method server "/handlercost.HandlerCost/Fast"
                               (handler (lambda (micros) (declare (ignore micros))))
                               :inline fast-inline)
  (clgrpc.grpc:register-method server "/handlercost.HandlerCost/Sleep"
                               (handler (lambda (micros) (sleep (/ micros 1000000)))))
  (clgrpc.grpc:register-method server "/handlercost.HandlerCost/Spin" (handler #'spin))
  server)
