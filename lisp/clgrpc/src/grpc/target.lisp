;;;; Channel targets as gRPC names them (doc/naming.md), resolved to the
;;;; addresses a channel balances over:
;;;;
;;;;   dns:///host:port, dns:host:port, host:port   every A and AAAA record
;;;;   ipv4:1.2.3.4:80,5.6.7.8:81                   these addresses
;;;;   ipv6:[::1]:80,[::2]:81                       these addresses
;;;;   unix:relative/path, unix:///absolute/path    a Unix domain socket
;;;;
;;;; A missing port is 443, as gRPC has it.  Names are resolved when the
;;;; channel is made, and again when its connections fail (resolver.lisp);
;;;; no DNS server other than the system's (dns://server/ is refused).

(in-package #:clgrpc.grpc)

(define-condition target-error (error)
  ((target :initarg :target :reader target-error-target)
   (reason :initarg :reason :reader target-error-reason))
  (:report (lambda (c s) (format s "invalid target ~S: ~A" (target-error-target c) (target-error-reason c)))))

(defun %target-fail (target format-control &rest args)
  (error 'target-error :target target :reason (apply #'format nil format-control args)))

(defun %split-host-port (target text)
  "(values host port) of HOST:PORT, [IPv6]:PORT, HOST or [IPv6] (port 443)."
  (multiple-value-bind (host rest)
      (if (and (plusp (length text)) (char= (char text 0) #\[))
          (let ((close (position #\] text)))
            (unless close (%target-fail target "unclosed [ in ~S" text))
            (values (subseq text 1 close) (subseq text (1+ close))))
          (let ((colon (position #\: text :from-end t)))
            (if (and colon (= colon (position #\: text)))
                (values (subseq text 0 colon) (subseq text colon))
                (values text ""))))
    (when (zerop (length host))
      (%target-fail target "no host in ~S" text))
    (cond ((zerop (length rest)) (values host 443))
          ((and (char= (char rest 0) #\:) (> (length rest) 1) (every #'digit-char-p (subseq rest 1))
                (<= (parse-integer rest :start 1) 65535))
           (values host (parse-integer rest :start 1)))
          (t (%target-fail target "bad port in ~S" text)))))

(defun %literal-addresses (target list parse)
  (loop for entry in (split-sequence-simple #\, list)
        collect (multiple-value-bind (host port) (%split-host-port target entry)
                  (cons (handler-case (funcall parse host)
                          (error () (%target-fail target "~S is not an address" host)))
                        port))))

(defun split-sequence-simple (char text)
  (loop for start = 0 then (1+ end)
        for end = (position char text :start start)
        collect (subseq text start end)
        while end))

(defun %target-prefix-p (target prefix)
  (and (>= (length target) (length prefix))
       (string= prefix target :end2 (length prefix))))

(defun canonical-target (target)
  "TARGET as gRPC names it canonically: a name without a scheme is a DNS
name (dns:///host:port), and dns:host:port is dns:///host:port."
  (flet ((prefix-p (prefix) (%target-prefix-p target prefix)))
    (cond ((or (prefix-p "dns:///") (prefix-p "ipv4:") (prefix-p "ipv6:") (prefix-p "unix:")) target)
          ((prefix-p "dns:") (concatenate 'string "dns:///" (subseq target 4)))
          (t (concatenate 'string "dns:///" target)))))

(defun resolve-by-dns (host port)
  "The addresses HOST has (every A and AAAA record, through getaddrinfo),
each with PORT: ((address . port) ...)."
  (mapcar (lambda (address) (cons address port)) (clgrpc.net:resolve-addresses host)))

(defun parse-target (target &optional (resolver #'resolve-by-dns))
  "The addresses TARGET names, ((host . port) ...), each host an address
vector or (:UNIX path), the authority its calls carry, and a function of
no arguments that resolves the name again (NIL for a target of literal
addresses).  RESOLVER, called as (resolver host port), gives a DNS name's
addresses.  Signals TARGET-ERROR for a target gRPC's naming does not
allow, or a name that does not resolve."
  (flet ((after (prefix) (subseq target (length prefix)))
         (prefix-p (prefix) (%target-prefix-p target prefix)))
    (cond
      ((prefix-p "unix:")
       (let ((path (if (prefix-p "unix://") (after "unix://") (after "unix:"))))
         (when (zerop (length path)) (%target-fail target "no path"))
         (when (and (prefix-p "unix://") (char/= (char path 0) #\/))
           (%target-fail target "unix:// needs an absolute path (unix:///path)"))
         (values (list (cons (list :unix path) 0)) "localhost")))
      ((prefix-p "ipv4:")
       (values (%literal-addresses target (after "ipv4:")
                                   (lambda (h)
                                     (if (every (lambda (c) (or (digit-char-p c) (char= c #\.))) h)
                                         (sb-bsd-sockets:make-inet-address h)
                                         (error "not IPv4"))))
               (after "ipv4:")))
      ((prefix-p "ipv6:")
       (values (%literal-addresses target (after "ipv6:") #'sb-bsd-sockets:make-inet6-address)
               (after "ipv6:")))
      (t
       (let ((name (cond ((prefix-p "dns:///") (after "dns:///"))
                         ((prefix-p "dns://") (%target-fail target "a DNS server of its own is not supported"))
                         ((prefix-p "dns:") (after "dns:"))
                         (t target))))
         (multiple-value-bind (host port) (%split-host-port target name)
           (if (clgrpc.net:ipv6-literal-p host)
               (values (list (cons (sb-bsd-sockets:make-inet6-address host) port)) name nil)
               (flet ((resolve ()
                        (or (handler-case (funcall resolver host port)
                              (error (e) (%target-fail target "~A" e)))
                            (%target-fail target "the name has no address"))))
                 (values (resolve) name #'resolve)))))))))
