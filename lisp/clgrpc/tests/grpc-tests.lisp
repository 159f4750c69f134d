;;;; gRPC over HTTP/2 tests: the encodings (grpc-timeout, grpc-message,
;;;; base64 metadata), then calls between our client and server over
;;;; loopback for the four kinds of method, statuses, metadata, deadlines,
;;;; cancellation and limits, and raw requests checking the server's answers
;;;; on the wire.

(in-package #:clgrpc.tests)

(def-suite :clgrpc.grpc :in :clgrpc)
(in-suite :clgrpc.grpc)

;;; ------------------------------------------------------------------
;;; Encodings

(test grpc-timeout-parsing
  (is (= 3600000000 (clgrpc.grpc:parse-grpc-timeout "1H")))
  (is (= 120000000 (clgrpc.grpc:parse-grpc-timeout "2M")))
  (is (= 5000000 (clgrpc.grpc:parse-grpc-timeout "5S")))
  (is (= 100000 (clgrpc.grpc:parse-grpc-timeout "100m")))
  (is (= 30 (clgrpc.grpc:parse-grpc-timeout "30u")))
  (is (= 1 (clgrpc.grpc:parse-grpc-timeout "999n")))
  (is (= 99999999 (clgrpc.grpc:parse-grpc-timeout "99999999u")))
  (dolist (bad '("" "1" "S" "123456789S" "1x" "-1S" "1.5S" " 1S"))
    (is (null (clgrpc.grpc:parse-grpc-timeout bad)) "~S should not parse" bad)))

(test grpc-timeout-formatting
  (is (string= "1500u" (clgrpc.grpc:format-grpc-timeout 1500)))
  (is (string= "1u" (clgrpc.grpc:format-grpc-timeout 0)))
  (is (string= "1000000m" (clgrpc.grpc:format-grpc-timeout 1000000000)))
  (is (string= "100001m" (clgrpc.grpc:format-grpc-timeout 100000001)))
  ;; never shorter than asked, and always parseable
  (dolist (us '(1 999 100000000 123456789012 9999999999999))
    (let ((back (clgrpc.grpc:parse-grpc-timeout (clgrpc.grpc:format-grpc-timeout us))))
      (is (>= back us)))))

(test grpc-message-percent-encoding
  (is (string= "hello world" (clgrpc.grpc:percent-encode-message "hello world")))
  (is (string= "50%25" (clgrpc.grpc:percent-encode-message "50%")))
  (is (string= "caf%C3%A9%0A" (clgrpc.grpc:percent-encode-message (format nil "café~%"))))
  (is (string= (format nil "café~%") (clgrpc.grpc:percent-decode-message "caf%C3%A9%0A")))
  (is (string= "100%" (clgrpc.grpc:percent-decode-message "100%")))
  (is (string= "%zz" (clgrpc.grpc:percent-decode-message "%zz")))
  (let ((s (coerce (loop for i from 1 below 300 collect (code-char i)) 'string)))
    (is (string= s (clgrpc.grpc:percent-decode-message (clgrpc.grpc:percent-encode-message s))))))

(test base64-vectors
  ;; RFC 4648 section 10
  (loop for (plain padded) in '(("" "") ("f" "Zg==") ("fo" "Zm8=") ("foo" "Zm9v") ("foob" "Zm9vYg==")
                                ("fooba" "Zm9vYmE=") ("foobar" "Zm9vYmFy"))
        do (is (string= padded (clgrpc.grpc:base64-encode (latin1-to-octets plain) :pad t)))
           (is (string= (string-right-trim "=" padded)
                        (clgrpc.grpc:base64-encode (latin1-to-octets plain))))
           (is (equalp (latin1-to-octets plain) (clgrpc.grpc:base64-decode padded)))
           (is (equalp (latin1-to-octets plain)
                       (clgrpc.grpc:base64-decode (string-right-trim "=" padded)))))
  (is (null (clgrpc.grpc:base64-decode "Zm9v!")))
  (is (null (clgrpc.grpc:base64-decode "Z"))))

(test metadata-conversion
  (let* ((md (list (cons "x-token" "abc") (cons "x-data-bin" (octets-of 0 255 7))))
         (headers (clgrpc.grpc::metadata-to-headers md)))
    (is (equal '(("x-token" . "abc") ("x-data-bin" . "AP8H")) headers))
    (is (equalp md (clgrpc.grpc::headers-to-metadata
                    (append '((":path" . "/a/b") ("grpc-timeout" . "1S") ("te" . "trailers"))
                            headers)))))
  (signals clgrpc.grpc:grpc-error (clgrpc.grpc::metadata-to-headers '(("grpc-foo" . "x"))))
  (signals clgrpc.grpc:grpc-error (clgrpc.grpc::metadata-to-headers '(("x" . "line
break")))))

(test status-mappings
  (is (= clgrpc.grpc:+unavailable+ (clgrpc.grpc::status-from-http2-error clgrpc.http2:+refused-stream+)))
  (is (= clgrpc.grpc:+cancelled+ (clgrpc.grpc::status-from-http2-error clgrpc.http2:+cancel+)))
  (is (= clgrpc.grpc:+internal+ (clgrpc.grpc::status-from-http2-error clgrpc.http2:+protocol-error+)))
  (is (= clgrpc.grpc:+unimplemented+ (clgrpc.grpc::status-from-http-status 404)))
  (is (= clgrpc.grpc:+unavailable+ (clgrpc.grpc::status-from-http-status 503)))
  (is (= clgrpc.grpc:+unknown+ (clgrpc.grpc::status-from-http-status 500)))
  (is (string= "DEADLINE_EXCEEDED" (clgrpc.grpc:status-code-name 4))))

;;; ------------------------------------------------------------------
;;; A test service with the raw (octets) codec

(defvar *observed* nil "What handlers saw, for tests to check.")
(defvar *observed-lock* (sb-thread:make-mutex))

(defun observe (x)
  (sb-thread:with-mutex (*observed-lock*) (push x *observed*)))

(defun wait-observed (predicate &optional (timeout 5))
  (loop repeat (* timeout 100)
        do (let ((x (sb-thread:with-mutex (*observed-lock*) (find-if predicate *observed*))))
             (when x (return x))
             (sleep 0.01))))

(defun bytes (&rest values) (apply #'octets-of values))

(defun filled (n value)
  (make-array n :element-type '(unsigned-byte 8) :initial-element value))

(defvar *gate* (sb-thread:make-semaphore)
  "What the Gate method waits for.")
(defvar *second-gate* (sb-thread:make-semaphore)
  "What the OpenGateThenWait method waits for.")

(defun where-octets (call)
  "Where CALL's handler runs: \"reactor\" on the reactor serving its
connection, else the thread's name (the executor's, \"grpc handler\")."
  (map 'octets #'char-code
       (if (clgrpc.http2:reader-thread-p (clgrpc.grpc::call-conn call))
           "reactor"
           (sb-thread:thread-name sb-thread:*current-thread*))))

(defvar *rendezvous* (list 0)
  "In its car: Rendezvous calls that have arrived (atomic).")

(defvar *inner-channels* '()
  "Connected channels the CallOut method may call through.")

(defun call-out (call)
  "From CALL's handler: a 1.5 MB Echo through one of *INNER-CHANNELS* whose
connection the handler's own reactor serves.  (1) if it is answered, (2) if
no channel is on that reactor."
  (let* ((mine (clgrpc.http2::conn-reactor (clgrpc.grpc::call-conn call)))
         (channel (find-if (lambda (ch)
                             (eq mine (clgrpc.http2::conn-reactor (clgrpc.grpc::channel-conn ch))))
                           *inner-channels*))
         (big (filled 1500000 3)))
    (cond ((null channel) (bytes 2))
          ((equalp big (unary channel "Echo" big :timeout 5)) (bytes 1))
          (t (bytes 0)))))

(defun register-test-methods (server &optional inline)
  "The test service; INLINE names the methods registered :INLINE."
  (flet ((reg (name kind fn) (clgrpc.grpc:register-method server (concatenate 'string "/test.Svc/" name)
                                                          fn :kind kind
                                                             :inline (member name inline :test #'string=))))
    (reg "Echo" :unary (lambda (req call) (declare (ignore call)) req))
    (reg "Sized" :unary                 ; 10,000 x (aref req 0) octets
         (lambda (req call) (declare (ignore call)) (filled (* 10000 (aref req 0)) 7)))
    (reg "Filled" :unary                ; 10,000 x (aref req 0) octets of (aref req 1)
         (lambda (req call) (declare (ignore call)) (filled (* 10000 (aref req 0)) (aref req 1))))
    (reg "Where" :unary                 ; where its handler ran (WHERE-OCTETS)
         (lambda (req call) (declare (ignore req)) (where-octets call)))
    (reg "OpenGateThenWait" :unary      ; signals *GATE*, then as Gate on *SECOND-GATE*
         (lambda (req call)
           (declare (ignore req call))
           (sb-thread:signal-semaphore *gate*)
           (bytes (if (sb-thread:wait-on-semaphore *second-gate* :timeout 10) 1 0))))
    (reg "Rendezvous" :unary            ; (1) once (aref req 0) calls are in here, (0) after 2 s
         (lambda (req call)
           (declare (ignore call))
           (sb-ext:atomic-incf (car *rendezvous*))
           (bytes (if (loop repeat 200
                            thereis (>= (car *rendezvous*) (aref req 0))
                            do (sleep 0.01))
                      1 0))))
    (reg "ReactorIndex" :unary          ; which reactor serves the call's connection
         (lambda (req call)
           (declare (ignore req))
           (bytes (position (clgrpc.http2::conn-reactor (clgrpc.grpc::call-conn call))
                            clgrpc.http2::*reactors*))))
    (reg "CallOut" :unary (lambda (req call) (declare (ignore req)) (call-out call)))
    (reg "StreamWhere" :client-streaming ; reads every message, then as Where
         (lambda (call)
           (loop while (clgrpc.grpc:call-recv call))
           (where-octets call)))
    (reg "Gate" :unary                  ; (1) once *GATE* is signalled, (0) after 10 s
         (lambda (req call)
           (declare (ignore req call))
           (bytes (if (sb-thread:wait-on-semaphore *gate* :timeout 10) 1 0))))
    (reg "Fail" :unary (lambda (req call)
                         (declare (ignore req))
                         (clgrpc.grpc:call-set-trailer-metadata call '(("x-why" . "because")))
                         (error 'clgrpc.grpc:grpc-error :code clgrpc.grpc:+failed-precondition+
                                                        :message (format nil "no 100% café"))))
    (reg "Crash" :unary (lambda (req call) (declare (ignore call)) (car req)))
    (reg "Nothing" :unary (lambda (req call) (declare (ignore req call)) nil))
    (reg "Metadata" :unary
         (lambda (req call)
           (let ((md (clgrpc.grpc:call-metadata call)))
             (clgrpc.grpc:call-set-response-metadata
              call (remove-if-not (lambda (e) (search "x-" (car e))) md))
             (clgrpc.grpc:call-set-trailer-metadata call '(("x-trailer-bin" . #(1 2 3))))
             req)))
    (reg "Sleep" :unary
         (lambda (req call)
           (loop repeat 100 until (clgrpc.grpc:call-cancelled-p call) do (sleep 0.02))
           (observe (list :sleep-cancelled (clgrpc.grpc:call-cancelled-p call)))
           req))
    (reg "Deadline" :unary
         (lambda (req call) (observe (list :deadline (clgrpc.grpc:call-deadline call))) req))
    (reg "Count" :server-streaming
         (lambda (req call) (dotimes (i (aref req 0)) (clgrpc.grpc:call-send call (bytes i)))))
    (reg "Big" :server-streaming
         (lambda (req call)
           (dotimes (i (aref req 0)) (clgrpc.grpc:call-send call (filled 100000 i)))))
    (reg "StreamFail" :server-streaming
         (lambda (req call)
           (declare (ignore req))
           (clgrpc.grpc:call-send call (bytes 1))
           (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+aborted+ "stopped after one")))
    (reg "Sum" :client-streaming
         (lambda (call)
           (let ((sum 0))
             (loop for m = (clgrpc.grpc:call-recv call) while m do (incf sum (reduce #'+ m)))
             (bytes (mod sum 256) (mod (floor sum 256) 256) (mod (floor sum 65536) 256)))))
    (reg "Zip" :unary                   ; echo, compressed if the client accepts gzip
         (lambda (req call)
           (observe (list :request-compressed (clgrpc.grpc:call-received-compressed-p call)))
           (clgrpc.grpc:call-set-response-compression call t)
           req))
    (reg "ZipBigHeaders" :unary         ; compressed, with more metadata than a small client takes
         (lambda (req call)
           (clgrpc.grpc:call-set-response-metadata
            call (list (cons "x-big" (make-string 2000 :initial-element #\a))))
           (clgrpc.grpc:call-set-response-compression call t)
           req))
    (reg "ZipStream" :server-streaming  ; compressed, plain, compressed
         (lambda (req call)
           (clgrpc.grpc:call-set-response-compression call t)
           (dolist (compress '(t nil t))
             (clgrpc.grpc:call-send call req :compress compress))))
    (reg "Flags" :client-streaming      ; whether each request came compressed
         (lambda (call)
           (let ((flags (loop while (clgrpc.grpc:call-recv call)
                              collect (if (clgrpc.grpc:call-received-compressed-p call) 1 0))))
             (apply #'bytes flags))))
    (reg "ReadOneThenSleep" :bidi       ; takes one message, then reads no more until cancelled
         (lambda (call)
           (clgrpc.grpc:call-recv call)
           (observe :read-one)
           (loop repeat 500 until (clgrpc.grpc:call-cancelled-p call) do (sleep 0.01))))
    (reg "Reply16M" :unary              ; 16 MiB, more than the output and socket buffers hold
         (lambda (req call) (declare (ignore req call)) (filled (* 16 1024 1024) 1)))
    (reg "Reply32K" :unary              ; 32 KiB of the request's first octet
         (lambda (req call) (declare (ignore call)) (filled 32768 (aref req 0))))
    (reg "BadMetadata" :unary           ; response metadata that cannot be sent
         (lambda (req call)
           (clgrpc.grpc:call-set-response-metadata call (list (cons "x-bad" (string (code-char 233)))))
           req))
    (reg "ZipLater" :bidi               ; asks for compression after its first response
         (lambda (call)
           (loop for m = (clgrpc.grpc:call-recv call) while m
                 do (clgrpc.grpc:call-send call m)
                    (clgrpc.grpc:call-set-response-compression call t))))
    (reg "Chat" :bidi
         (lambda (call)
           (handler-case
               (loop for m = (clgrpc.grpc:call-recv call) while m
                     do (clgrpc.grpc:call-send call m))
             (clgrpc.grpc:grpc-error (e)
               (observe (list :chat-ended (clgrpc.grpc:grpc-error-code e)))
               (error e)))))))

(defmacro with-grpc ((channel &rest server-args &key channel-args inline &allow-other-keys) &body body)
  "BODY with CHANNEL connected to a server of the test service, made with
SERVER-ARGS; INLINE names the methods registered :INLINE."
  (let ((server (gensym "SERVER")) (port (gensym "PORT")))
    (setf server-args (copy-list server-args))
    (remf server-args :channel-args)
    (remf server-args :inline)
    `(let* ((,server (clgrpc.grpc:make-server ,@server-args))
            (,port (progn (register-test-methods ,server ,inline) (clgrpc.grpc:server-start ,server)))
            (,channel (apply #'clgrpc.grpc:make-channel "127.0.0.1" ,port (list ,@channel-args))))
       (declare (ignorable ,port))
       (setf *observed* nil)
       (unwind-protect (progn ,@body)
         (clgrpc.grpc:channel-close ,channel)
         (clgrpc.grpc:server-stop ,server :grace 1)))))

(defun status-of (thunk)
  "(code message) of the GRPC-ERROR THUNK signals, or :OK."
  (handler-case (progn (funcall thunk) :ok)
    (clgrpc.grpc:grpc-error (e)
      (list (clgrpc.grpc:status-code-name (clgrpc.grpc:grpc-error-code e))
            (clgrpc.grpc:grpc-error-message e)))))

(defun unary (channel method request &rest args)
  (apply #'clgrpc.grpc:unary-call channel (concatenate 'string "/test.Svc/" method) request args))

;;; ------------------------------------------------------------------
;;; The four kinds

(test unary-echo
  (with-grpc (ch)
    (is (equalp (bytes 1 2 3) (unary ch "Echo" (bytes 1 2 3))))
    (is (equalp (bytes) (unary ch "Echo" (bytes))))
    (let ((big (filled 3000000 9)))
      (is (equalp big (unary ch "Echo" big :timeout 10))))))

(test unary-inline
  ;; Methods registered :INLINE run on the connection's reactor: the same
  ;; responses, statuses and concurrency; a response larger than the send
  ;; window is parked and finished as the window opens.
  (with-grpc (ch :inline '("Echo" "Fail" "Crash" "Nothing"))
    (is (equalp (bytes 1 2 3) (unary ch "Echo" (bytes 1 2 3))))
    (is (equalp (bytes) (unary ch "Echo" (bytes))))
    (let ((big (filled 3000000 9)))
      (is (equalp big (unary ch "Echo" big :timeout 10))))
    (is (equal '("FAILED_PRECONDITION" "no 100% café")
               (status-of (lambda () (unary ch "Fail" (bytes))))))
    (is (equal "UNKNOWN" (first (status-of (lambda () (unary ch "Crash" (bytes 1)))))))
    (is (equal '("INTERNAL" "handler returned no response")
               (status-of (lambda () (unary ch "Nothing" (bytes 1))))))
    (let ((threads (loop for i below 8
                         collect (let ((i i))
                                   (sb-thread:make-thread
                                    (lambda ()
                                      (loop for k below 50
                                            always (equalp (bytes i k)
                                                           (unary ch "Echo" (bytes i k)
                                                                  :timeout 10)))))))))
      (is (every #'sb-thread:join-thread threads)))
    ;; the other kinds still run on the executor
    (let ((call (clgrpc.grpc:client-streaming-call ch "/test.Svc/Sum" :timeout 5)))
      (dotimes (i 100) (clgrpc.grpc:call-send call (bytes i)))
      (is (equalp (bytes (mod 4950 256) (floor 4950 256) 0)
                  (clgrpc.grpc:call-close-and-recv call))))))

(defun where (channel method)
  (map 'string #'code-char (unary channel method (bytes) :timeout 10)))

(test handler-calls-out-through-its-own-reactor
  ;; A handler that calls through a connection its own reactor serves: its
  ;; request is written, not left for that reactor (busy running the
  ;; handler) to write after a read on that connection that never comes.
  (with-grpc (ch)
    (let ((port (clgrpc.grpc::channel-port ch))
          (spacers '()))
      (unwind-protect
           (progn
             ;; Connections go to the reactors in turn, each side of a
             ;; channel's connection too: open channels, with a raw
             ;; connection (a server side alone) between them to shift the
             ;; turn, until one's client side is on the reactor that serves
             ;; CH's server side.
             (let ((wanted (aref (unary ch "ReactorIndex" (bytes) :timeout 5) 0)))
               (loop repeat 20
                     until (let ((inner (clgrpc.grpc:make-channel "127.0.0.1" port)))
                             (push inner *inner-channels*)
                             (unary inner "Echo" (bytes 0) :timeout 5)
                             (eql wanted (position (clgrpc.http2::conn-reactor
                                                    (clgrpc.grpc::channel-conn inner))
                                                   clgrpc.http2::*reactors*)))
                     do (push (raw-connect-port port) spacers)))
             (is (equalp (bytes 1) (unary ch "CallOut" (bytes) :timeout 10))))
        (mapc #'raw-close spacers)
        (mapc #'clgrpc.grpc:channel-close (shiftf *inner-channels* '()))))))

(test server-streaming
  (with-grpc (ch)
    (let ((call (clgrpc.grpc:server-streaming-call ch "/test.Svc/Count" (bytes 10) :timeout 5)))
      (is (equalp (loop for i below 10 collect (bytes i))
                  (loop for m = (clgrpc.grpc:call-recv call) while m collect m))))
    ;; more than the flow-control windows hold
    (let ((call (clgrpc.grpc:server-streaming-call ch "/test.Svc/Big" (bytes 30) :timeout 10)))
      (is (equal (loop for i below 30 collect i)
                 (loop for m = (clgrpc.grpc:call-recv call) while m
                       collect (aref m 0)))))
    (let ((call (clgrpc.grpc:server-streaming-call ch "/test.Svc/StreamFail" (bytes) :timeout 5)))
      (is (equalp (bytes 1) (clgrpc.grpc:call-recv call)))
      (is (equal '("ABORTED" "stopped after one")
                 (status-of (lambda () (clgrpc.grpc:call-recv call))))))))

(test client-streaming
  (with-grpc (ch)
    (let ((call (clgrpc.grpc:client-streaming-call ch "/test.Svc/Sum" :timeout 5)))
      (dotimes (i 100) (clgrpc.grpc:call-send call (bytes i)))
      (is (equalp (bytes (mod 4950 256) (floor 4950 256) 0)
                  (clgrpc.grpc:call-close-and-recv call))))
    ;; no messages at all
    (let ((call (clgrpc.grpc:client-streaming-call ch "/test.Svc/Sum" :timeout 5)))
      (is (equalp (bytes 0 0 0) (clgrpc.grpc:call-close-and-recv call))))
    ;; a message split over many DATA frames
    (let ((call (clgrpc.grpc:client-streaming-call ch "/test.Svc/Sum" :timeout 5)))
      (clgrpc.grpc:call-send call (filled 100000 1))
      (is (equalp (bytes (mod 100000 256) (mod (floor 100000 256) 256) 1)
                  (clgrpc.grpc:call-close-and-recv call))))))

(test bidi-streaming
  (with-grpc (ch)
    (let ((call (clgrpc.grpc:bidi-streaming-call ch "/test.Svc/Chat" :timeout 5)))
      (is (equalp (loop for i below 20 collect (bytes i))
                  (loop for i below 20
                        collect (progn (clgrpc.grpc:call-send call (bytes i))
                                       (clgrpc.grpc:call-recv call)))))
      (clgrpc.grpc:call-close-send call)
      (is (null (clgrpc.grpc:call-recv call)))
      (is (= clgrpc.grpc:+ok+ (clgrpc.grpc:call-status-code call))))))

(test concurrent-calls-on-one-channel
  (with-grpc (ch)
    (let* ((threads (loop for i below 8
                          collect (let ((i i))
                                    (sb-thread:make-thread
                                     (lambda ()
                                       (loop for j below 200
                                             always (equalp (bytes i (mod j 256))
                                                            (unary ch "Echo" (bytes i (mod j 256))
                                                                   :timeout 10)))))))))
      (is (every #'sb-thread:join-thread threads)))))

;;; ------------------------------------------------------------------
;;; Statuses and metadata

(test error-status-and-trailers
  (with-grpc (ch)
    (handler-case (progn (unary ch "Fail" (bytes)) (fail "no error"))
      (clgrpc.grpc:grpc-error (e)
        (is (= clgrpc.grpc:+failed-precondition+ (clgrpc.grpc:grpc-error-code e)))
        (is (string= "no 100% café" (clgrpc.grpc:grpc-error-message e)))
        (is (equal '(("x-why" . "because")) (clgrpc.grpc:grpc-error-metadata e)))))
    (is (equal "UNKNOWN" (first (status-of (lambda () (unary ch "Crash" (bytes 1)))))))
    (is (equal '("INTERNAL" "handler returned no response")
               (status-of (lambda () (unary ch "Nothing" (bytes 1))))))
    (is (equal '("UNIMPLEMENTED" "unknown method Nope for service test.Svc")
               (status-of (lambda () (unary ch "Nope" (bytes))))))
    (is (equal '("UNIMPLEMENTED" "unknown service other.Svc")
               (status-of (lambda () (clgrpc.grpc:unary-call ch "/other.Svc/X" (bytes))))))
    ;; the channel still works
    (is (equalp (bytes 5) (unary ch "Echo" (bytes 5))))))

(test custom-metadata-both-ways
  (with-grpc (ch)
    (multiple-value-bind (response call)
        (unary ch "Metadata" (bytes 1)
               :metadata (list (cons "x-token" "secret") (cons "x-blob-bin" (bytes 0 1 2 255))))
      (is (equalp (bytes 1) response))
      (is (equalp (list (cons "x-token" "secret") (cons "x-blob-bin" (bytes 0 1 2 255)))
                  (remove-if-not (lambda (e) (search "x-" (car e)))
                                 (clgrpc.grpc:call-response-metadata call))))
      (is (equalp (list (cons "x-trailer-bin" (bytes 1 2 3)))
                  (clgrpc.grpc:call-peer-trailers call))))))

;;; ------------------------------------------------------------------
;;; Deadlines and cancellation

(test client-deadline
  (with-grpc (ch)
    (let ((start (get-internal-real-time)))
      (is (equal "DEADLINE_EXCEEDED" (first (status-of (lambda () (unary ch "Sleep" (bytes) :timeout 0.2))))))
      (is (< (- (get-internal-real-time) start) 1500000)))
    ;; the server's handler saw its context cancelled
    (is (wait-observed (lambda (x) (equal x '(:sleep-cancelled t)))))
    (is (equalp (bytes 7) (unary ch "Echo" (bytes 7))))))

(test deadline-reaches-handler
  (with-grpc (ch)
    (unary ch "Deadline" (bytes) :timeout 30)
    (let ((seen (second (wait-observed (lambda (x) (eq (first x) :deadline))))))
      (is (and seen (< 25 seen 30.01))))
    (setf *observed* nil)
    (unary ch "Deadline" (bytes))
    (is (equal '(:deadline nil) (wait-observed (lambda (x) (eq (first x) :deadline)))))))

(test client-cancel-reaches-server
  (with-grpc (ch)
    (let ((call (clgrpc.grpc:bidi-streaming-call ch "/test.Svc/Chat" :timeout 5)))
      (clgrpc.grpc:call-send call (bytes 1))
      (is (equalp (bytes 1) (clgrpc.grpc:call-recv call)))
      (clgrpc.grpc:call-cancel call)
      (is (equal "CANCELLED" (first (status-of (lambda () (clgrpc.grpc:call-recv call))))))
      (is (wait-observed (lambda (x) (equal x (list :chat-ended clgrpc.grpc:+cancelled+))))))))

(test server-enforces-deadline
  ;; A raw client announces a 100 ms deadline and never cancels: the server
  ;; must answer DEADLINE_EXCEEDED itself.
  (let* ((server (clgrpc.grpc:make-server))
         (port (progn (register-test-methods server) (clgrpc.grpc:server-start server))))
    (unwind-protect
         (let ((peer (raw-connect-port port)))
           (unwind-protect
                (progn
                  (raw-headers peer 1 :headers (grpc-request-headers "/test.Svc/Sleep" '(("grpc-timeout" . "100m"))))
                  (raw-data peer 1 (grpc-frame (bytes)) :end-stream t)
                  (let ((trailers (raw-grpc-response peer 1)))
                    (is (equal "4" (header "grpc-status" trailers)))))
             (raw-close peer)))
      (clgrpc.grpc:server-stop server :grace 1))))

;;; ------------------------------------------------------------------
;;; Limits

(test message-size-limits
  (with-grpc (ch :max-receive-message-size 1000 :channel-args (:max-receive-message-size 500))
    (is (equal "RESOURCE_EXHAUSTED" (first (status-of (lambda () (unary ch "Echo" (make-octets 2000)))))))
    (is (equal "RESOURCE_EXHAUSTED" (first (status-of (lambda () (unary ch "Echo" (make-octets 800)))))))
    (is (equalp (make-octets 400) (unary ch "Echo" (make-octets 400))))))

;;; ------------------------------------------------------------------
;;; Raw requests: what the server puts on the wire

(defun header (name headers) (cdr (assoc name headers :test #'string=)))

(defun raw-grpc-response (peer stream-id)
  "Read the response on STREAM-ID up to its END_STREAM; returns the last
header block (the trailers), all header blocks decoded in order."
  (loop
    (let ((f (raw-expect peer (lambda (f) (member (clgrpc.http2:frame-type f)
                                                  (list clgrpc.http2:+frame-headers+
                                                        clgrpc.http2:+frame-data+))))))
      (when (symbolp f) (return f))
      (let ((headers (and (= (clgrpc.http2:frame-type f) clgrpc.http2:+frame-headers+)
                          (raw-decode-headers peer f))))
        (when (and (= stream-id (clgrpc.http2:frame-stream-id f))
                   (clgrpc.http2:frame-end-stream-p f))
          (return headers))))))

(defmacro with-raw-grpc ((peer) &body body)
  (let ((server (gensym)) (port (gensym)))
    `(let* ((,server (clgrpc.grpc:make-server))
            (,port (progn (register-test-methods ,server) (clgrpc.grpc:server-start ,server))))
       (unwind-protect (let ((,peer (raw-connect-port ,port)))
                         (unwind-protect (progn ,@body) (raw-close ,peer)))
         (clgrpc.grpc:server-stop ,server :grace 1)))))

(defun raw-client-stream-where (peer id whole)
  "Send a client stream of two messages to StreamWhere on stream ID: with
WHOLE, its headers and messages in one write; else the last message 200 ms
after the rest.  Returns where the handler ran (WHERE-OCTETS)."
  (let ((b (make-obuf 256)))
    (clgrpc.http2:write-headers-frame
     b id (raw-header-block peer (grpc-request-headers "/test.Svc/StreamWhere")))
    (clgrpc.http2:write-data-frame b id (grpc-frame (bytes 1)))
    (when whole
      (clgrpc.http2:write-data-frame b id (grpc-frame (bytes 2)) :end-stream t))
    (raw-send peer (obuf-contents b)))
  (unless whole
    (sleep 0.2)
    (raw-data peer id (grpc-frame (bytes 2)) :end-stream t))
  (let ((data (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+ id))))
    (unless (symbolp data)
      (map 'string #'code-char (subseq (clgrpc.http2:frame-data data)
                                       (+ 5 (clgrpc.http2:frame-data-start data))
                                       (clgrpc.http2:frame-data-end data))))))

(test table-size-settings-before-the-first-block-are-announced
  ;; The peer sets SETTINGS_HEADER_TABLE_SIZE to 0 and then back to 4096
  ;; before the server has sent any header block: the first one starts
  ;; with both size updates, the smallest first (RFC 7541, 4.2).
  (with-raw-grpc (peer)
    (raw-send-obuf peer (lambda (b)
                          (clgrpc.http2:write-settings-frame
                           b (list (cons clgrpc.http2:+settings-header-table-size+ 0)))
                          (clgrpc.http2:write-settings-frame
                           b (list (cons clgrpc.http2:+settings-header-table-size+ 4096)))))
    (sleep 0.1)
    (raw-grpc-request peer 1 "/test.Svc/Echo" (bytes 1))
    (let ((h (raw-expect peer (frame-of-type clgrpc.http2:+frame-headers+ 1))))
      (is (not (symbolp h)))
      (unless (symbolp h)
        (let ((start (clgrpc.http2:frame-data-start h)))
          ;; 001xxxxx: a size update; 0x20 is 0, then 0x3f 0xe1 0x1f is 4096.
          (is (equalp (bytes #x20 #x3f #xe1 #x1f)
                      (subseq (clgrpc.http2:frame-data h) start (+ start 4)))))))))

(test raw-unary-response-shape
  (with-raw-grpc (peer)
    (raw-headers peer 1 :headers (grpc-request-headers "/test.Svc/Echo"))
    (raw-data peer 1 (grpc-frame (bytes 42)) :end-stream t)
    (let ((h (raw-expect peer (frame-of-type clgrpc.http2:+frame-headers+ 1))))
      (is (equal '((":status" . "200") ("content-type" . "application/grpc"))
                 (raw-decode-headers peer h))))
    (let ((d (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+ 1))))
      (is (equalp (grpc-frame (bytes 42))
                  (subseq (clgrpc.http2:frame-data d) (clgrpc.http2:frame-data-start d)
                          (clgrpc.http2:frame-data-end d)))))
    (let ((trailers (raw-expect peer (frame-of-type clgrpc.http2:+frame-headers+ 1))))
      (is (clgrpc.http2:frame-end-stream-p trailers))
      (is (equal '(("grpc-status" . "0")) (raw-decode-headers peer trailers))))))

(test raw-trailers-only-errors
  (with-raw-grpc (peer)
    ;; unknown method: one HEADERS frame with END_STREAM
    (raw-headers peer 1 :headers (grpc-request-headers "/test.Svc/Nope") :end-stream t)
    (let ((h (raw-grpc-response peer 1)))
      (is (equal "200" (header ":status" h)))
      (is (equal "12" (header "grpc-status" h))))
    ;; compressed flag without grpc-encoding
    (raw-headers peer 3 :headers (grpc-request-headers "/test.Svc/Echo"))
    (raw-data peer 3 (grpc-frame (bytes 1) :flag 1) :end-stream t)
    (is (equal "13" (header "grpc-status" (raw-grpc-response peer 3))))
    ;; an encoding we do not support
    (raw-headers peer 5 :headers (grpc-request-headers "/test.Svc/Echo" '(("grpc-encoding" . "br"))))
    (let ((h (raw-grpc-response peer 5)))
      (is (equal "12" (header "grpc-status" h)))
      (is (equal "gzip" (header "grpc-accept-encoding" h))))
    ;; a compressed flag and gzip declared, but the message is not gzip
    (raw-headers peer 7 :headers (grpc-request-headers "/test.Svc/Echo" '(("grpc-encoding" . "gzip"))))
    (raw-data peer 7 (grpc-frame (bytes 1 2 3 4) :flag 1) :end-stream t)
    (is (equal "13" (header "grpc-status" (raw-grpc-response peer 7))))
    ;; unary without a request message, and with two
    (raw-headers peer 9 :headers (grpc-request-headers "/test.Svc/Echo") :end-stream t)
    (is (equal "13" (header "grpc-status" (raw-grpc-response peer 9))))
    (raw-headers peer 11 :headers (grpc-request-headers "/test.Svc/Echo"))
    (raw-data peer 11 (concatenate 'octets (grpc-frame (bytes 1)) (grpc-frame (bytes 2))) :end-stream t)
    (is (equal "13" (header "grpc-status" (raw-grpc-response peer 11))))
    ;; a message cut short by END_STREAM
    (raw-headers peer 13 :headers (grpc-request-headers "/test.Svc/Echo"))
    (raw-data peer 13 (subseq (grpc-frame (bytes 1 2 3)) 0 6) :end-stream t)
    (is (equal "13" (header "grpc-status" (raw-grpc-response peer 13))))
    ;; the connection is still fine
    (raw-headers peer 15 :headers (grpc-request-headers "/test.Svc/Echo"))
    (raw-data peer 15 (grpc-frame (bytes 3)) :end-stream t)
    (is (equal "0" (header "grpc-status" (raw-grpc-response peer 15))))))

(test raw-split-prefix
  ;; The 5-octet prefix and the message spread over many DATA frames.
  (with-raw-grpc (peer)
    (raw-headers peer 1 :headers (grpc-request-headers "/test.Svc/Echo"))
    (let ((frame (grpc-frame (bytes 1 2 3 4))))
      (loop for i below (length frame)
            do (raw-data peer 1 (subseq frame i (1+ i)) :end-stream (= i (1- (length frame))))))
    (let ((d (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+ 1))))
      (is (equalp (grpc-frame (bytes 1 2 3 4))
                  (subseq (clgrpc.http2:frame-data d) (clgrpc.http2:frame-data-start d)
                          (clgrpc.http2:frame-data-end d)))))))

(test graceful-server-stop
  (let* ((server (clgrpc.grpc:make-server))
         (port (progn (register-test-methods server) (clgrpc.grpc:server-start server)))
         (ch (clgrpc.grpc:make-channel "127.0.0.1" port))
         (result nil))
    (unwind-protect
         (let ((slow (sb-thread:make-thread
                      (lambda () (setf result (status-of (lambda () (unary ch "Sleep" (bytes 1) :timeout 0.5))))))))
           ;; Stop once the server holds the call (on a slow machine, such as
           ;; under qemu, sooner would refuse it unprocessed instead).
           (loop repeat 500
                 until (sb-thread:with-mutex ((clgrpc.grpc::server-lock server))
                         (loop for conn being the hash-keys of (clgrpc.grpc::server-connections server)
                                 thereis (plusp (clgrpc.http2:connection-handler-count conn))))
                 do (sleep 0.01))
           (clgrpc.grpc:server-stop server :grace 2)
           (sb-thread:join-thread slow)
           ;; the call in flight finished (here: its own deadline), not cut off
           (is (equal "DEADLINE_EXCEEDED" (first result)))
           (is (equal "UNAVAILABLE" (first (status-of (lambda () (unary ch "Echo" (bytes 1))))))))
      (clgrpc.grpc:channel-close ch)
      (clgrpc.grpc:server-stop server))))
