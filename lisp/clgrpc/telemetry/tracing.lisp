;;;; W3C trace context (the traceparent header) carried through gRPC calls
;;;; by interceptors, as OpenTelemetry's propagators carry it in grpc-go:
;;;;
;;;;   traceparent: 00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>
;;;;
;;;; A server's interceptor reads the request's traceparent and binds
;;;; *TRACE-CONTEXT* around the handler to a span of that trace (a new span
;;;; id, the caller's as its parent); a malformed header is ignored and a
;;;; new trace begins.  A channel's interceptor sends the trace of
;;;; *TRACE-CONTEXT* (or a new one) with a new span id, so a handler's own
;;;; calls stay in its caller's trace.  Recording or exporting spans is
;;;; left to the application: the ids are what it needs.

(in-package #:clgrpc.telemetry)

(defstruct (trace-context (:constructor %make-trace-context (trace-id span-id sampled parent-id)))
  (trace-id "" :type string)            ; 32 lower-case hex digits, not all zero
  (span-id "" :type string)             ; 16 lower-case hex digits, not all zero
  (sampled nil)
  (parent-id nil :type (or null string)))

(defvar *trace-context* nil
  "The span the current thread works in, or NIL.")

(defvar *trace-random* nil
  "Seeded on first use, in the running program: a state seeded while an
executable is built would be saved in it, making every build's bytes (and
every run's ids) differ or repeat.")
(defvar *trace-random-lock* (sb-thread:make-mutex :name "trace ids"))

(defun %random-hex (digits)
  (let ((n (sb-thread:with-mutex (*trace-random-lock*)
             (loop with state = (or *trace-random* (setf *trace-random* (make-random-state t)))
                   for n = (random (ash 1 (* 4 digits)) state)
                   until (plusp n)
                   finally (return n)))))
    (format nil "~(~v,'0x~)" digits n)))

(defun new-trace-context (&optional parent)
  "A new span: in PARENT's trace (a TRACE-CONTEXT) as its child, or the
first span of a new sampled trace."
  (if parent
      (%make-trace-context (trace-context-trace-id parent) (%random-hex 16)
                           (trace-context-sampled parent) (trace-context-span-id parent))
      (%make-trace-context (%random-hex 32) (%random-hex 16) t nil)))

(defun %lower-hex-p (string start end)
  (loop for i from start below end
        always (let ((c (char string i))) (or (char<= #\0 c #\9) (char<= #\a c #\f)))))

(defun parse-traceparent (value)
  "The TRACE-CONTEXT a traceparent header VALUE names (its span id is the
caller's), or NIL if W3C's rules refuse it: version 00 exactly 55
characters; a later version (not ff) read as 00 from its first 55, with
anything after them behind a dash."
  (and (stringp value) (>= (length value) 55)
       (%lower-hex-p value 0 2) (char= #\- (char value 2))
       (let ((version (parse-integer value :end 2 :radix 16)))
         (cond ((= version 0) (= (length value) 55))
               ((= version 255) nil)
               (t (or (= (length value) 55) (char= #\- (char value 55))))))
       (char= #\- (char value 35)) (char= #\- (char value 52))
       (%lower-hex-p value 3 35) (%lower-hex-p value 36 52) (%lower-hex-p value 53 55)
       (find-if (lambda (c) (char/= c #\0)) value :start 3 :end 35)
       (find-if (lambda (c) (char/= c #\0)) value :start 36 :end 52)
       (%make-trace-context (subseq value 3 35) (subseq value 36 52)
                            (logbitp 0 (parse-integer value :start 53 :end 55 :radix 16))
                            nil)))

(defun format-traceparent (context)
  (format nil "00-~A-~A-~:[00~;01~]" (trace-context-trace-id context) (trace-context-span-id context)
          (trace-context-sampled context)))

(defun server-tracing-interceptor ()
  "A server interceptor that binds *TRACE-CONTEXT* around the handler to a
span of the caller's trace (or of a new one)."
  (lambda (call request next)
    (let* ((header (cdr (assoc "traceparent" (clgrpc.grpc:call-metadata call) :test #'string=)))
           (*trace-context* (new-trace-context (parse-traceparent header))))
      (funcall next request))))

(defun client-tracing-interceptor ()
  "A channel interceptor that sends traceparent: a new span of
*TRACE-CONTEXT*'s trace, or of a new trace.  A traceparent the call's
metadata already has is left as it is."
  (lambda (info next)
    (unless (assoc "traceparent" (clgrpc.grpc:call-info-metadata info) :test #'string-equal)
      (push (cons "traceparent" (format-traceparent (new-trace-context *trace-context*)))
            (clgrpc.grpc:call-info-metadata info)))
    (funcall next)))
