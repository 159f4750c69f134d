;;;; The registry in Prometheus' text exposition format (version 0.0.4), named
;;;; as OpenTelemetry's Prometheus exporter names gRPC's instruments: dots
;;;; become underscores, the unit is appended (_seconds, _bytes) and a
;;;; counter ends in _total; a histogram has _bucket series with cumulative
;;;; counts and le bounds, then _sum and _count.  And a scrape endpoint: a
;;;; small HTTP/1.1 server that answers GET /metrics with it.

(in-package #:clgrpc.telemetry)

(defun %prometheus-name (instrument)
  (let ((base (substitute #\_ #\. (instrument-name instrument)))
        (unit (instrument-unit instrument)))
    (concatenate 'string base
                 (cond ((string= unit "s") "_seconds")
                       ((string= unit "By") "_bytes")
                       (t ""))
                 (if (eq (instrument-kind instrument) :counter) "_total" ""))))

(defun %escape-label-value (value)
  (with-output-to-string (out)
    (loop for c across value
          do (case c
               (#\\ (write-string "\\\\" out))
               (#\" (write-string "\\\"" out))
               (#\Newline (write-string "\\n" out))
               (t (write-char c out))))))

(defun %write-labels (out names values &optional le)
  (let ((pairs (append (mapcar #'cons (mapcar (lambda (n) (substitute #\_ #\. n)) names) values)
                       (and le (list (cons "le" le))))))
    (when pairs
      (format out "{~{~A~^,~}}"
              (mapcar (lambda (p) (format nil "~A=\"~A\"" (car p) (%escape-label-value (cdr p)))) pairs)))))

(defun %number (x)
  "X as Prometheus reads it: an integer, or the shortest decimal that reads
back (an exact decimal for the rational bucket bounds)."
  (cond ((integerp x) (format nil "~D" x))
        ((and (rationalp x) (= 1 (denominator (* x (expt 10 12)))))
         ;; A bound such as 1/100000: its exact decimal.
         (string-right-trim "." (string-right-trim "0" (format nil "~,12F" x))))
        (t (let ((*read-default-float-format* 'double-float))
             (prin1-to-string (float x 1d0))))))

(defun %escape-help (text)
  (with-output-to-string (out)
    (loop for c across text
          do (case c
               (#\\ (write-string "\\\\" out))
               (#\Newline (write-string "\\n" out))
               (t (write-char c out))))))

(defun %snapshot (registry)
  "REGISTRY's instruments and their series, copied under its lock (sorted
by name): formatting them happens after it is released, so recording,
which may run on a reactor, never waits for a scrape's formatting."
  (sb-thread:with-mutex ((registry-lock registry))
    (sort (loop for i being the hash-values of (registry-instruments registry)
                collect (list i (loop for values being the hash-keys of (instrument-series i)
                                        using (hash-value s)
                                      collect (cons values (%copy-series s)))))
          #'string< :key (lambda (e) (instrument-name (first e))))))

(defun %write-series (out name instrument values series)
  (let ((labels (instrument-labels instrument)))
    (if (eq (instrument-kind instrument) :counter)
        (progn (write-string name out)
               (%write-labels out labels values)
               (format out " ~A~%" (%number (series-count series))))
        (let ((cumulative 0))
          (loop for bound across (instrument-buckets instrument)
                for n across (series-buckets series)
                do (incf cumulative n)
                   (format out "~A_bucket" name)
                   (%write-labels out labels values (%number bound))
                   (format out " ~D~%" cumulative))
          (format out "~A_bucket" name)
          (%write-labels out labels values "+Inf")
          (format out " ~D~%~A_sum" (series-count series) name)
          (%write-labels out labels values)
          (format out " ~A~%~A_count" (%number (series-sum series)) name)
          (%write-labels out labels values)
          (format out " ~D~%" (series-count series))))))

(defun prometheus-text (registry)
  "The text a Prometheus scrape of REGISTRY reads."
  (with-output-to-string (out)
    (loop for (instrument series) in (%snapshot registry)
          for name = (%prometheus-name instrument)
          do (format out "# HELP ~A ~A~%# TYPE ~A ~(~A~)~%" name (%escape-help (instrument-help instrument))
                     name (instrument-kind instrument))
             (loop for (values . s) in (sort series #'string< :key (lambda (e) (format nil "~{~A~^,~}" (car e))))
                   do (%write-series out name instrument values s)))))

;;; ------------------------------------------------------------------
;;; The scrape endpoint

(defstruct (metrics-server (:constructor %make-metrics-server (socket port)))
  socket port
  (thread nil)
  (stopped nil)
  (lock (sb-thread:make-mutex :name "metrics server"))
  (active '() :type list)               ; sockets being answered
  ;; Connections answered at once; further ones wait to be accepted.
  (slots (sb-thread:make-semaphore :name "metrics scrapes" :count 4)))

(defconstant +max-request-octets+ 8192
  "A scrape's request head, at most.")

(defconstant +request-seconds+ 5
  "The time a scrape has to send its whole request head.")

(defun %read-request-line (stream)
  "The request line of an HTTP/1.1 head read from STREAM within
+REQUEST-SECONDS+ and +MAX-REQUEST-OCTETS+ (CRLF or bare LF line ends),
:TOO-LONG past the size, or NIL if it ends early or is too slow."
  (let ((head (make-array 64 :element-type 'character :adjustable t :fill-pointer 0))
        (give-up (+ (get-internal-real-time) (* +request-seconds+ internal-time-units-per-second)))
        (blank-line nil))
    (loop
      (when (> (get-internal-real-time) give-up)
        (return nil))
      (let ((octet (handler-case (read-byte stream nil nil)
                     (error () nil))))
        (cond ((null octet) (return nil))
              ((>= (fill-pointer head) +max-request-octets+) (return :too-long))
              ((= octet 13))
              ((= octet 10)
               (when blank-line
                 (return (subseq head 0 (or (position #\Newline head) (fill-pointer head)))))
               (setf blank-line t)
               (vector-push-extend #\Newline head))
              (t (setf blank-line nil)
                 (vector-push-extend (code-char octet) head)))))))

(defun %answer (stream status body &optional (type "text/plain; charset=utf-8"))
  (let ((octets (sb-ext:string-to-octets body :external-format :utf-8)))
    (write-sequence (sb-ext:string-to-octets
                     (format nil "HTTP/1.1 ~A~C~CContent-Type: ~A~C~CContent-Length: ~D~C~CConnection: close~C~C~C~C"
                             status #\Return #\Newline type #\Return #\Newline (length octets)
                             #\Return #\Newline #\Return #\Newline #\Return #\Newline)
                     :external-format :latin-1)
                    stream)
    (write-sequence octets stream)
    (finish-output stream)))

(defun %scrape-request-p (line)
  "Whether LINE asks for GET /metrics (a query string allowed)."
  (let ((target (and (> (length line) 4) (string= "GET " line :end2 4)
                     (subseq line 4 (or (position #\Space line :start 4) (length line))))))
    (and target (string= "/metrics" target :end2 (min (length target) (or (position #\? target) (length target))))
         (= (or (position #\? target) (length target)) 8))))

(defun %serve-scrape (registry socket)
  (let ((stream (sb-bsd-sockets:socket-make-stream socket :input t :output t
                                                          :element-type '(unsigned-byte 8)
                                                          :timeout +request-seconds+)))
    (unwind-protect
         (handler-case
             (let ((line (%read-request-line stream)))
               (cond ((eq line :too-long) (%answer stream "431 Request Header Fields Too Large" ""))
                     ((null line))
                     ((%scrape-request-p line)
                      (%answer stream "200 OK" (prometheus-text registry)
                               "text/plain; version=0.0.4; charset=utf-8"))
                     (t (%answer stream "404 Not Found" (format nil "Metrics are at GET /metrics.~%")))))
           (error () nil))
      (ignore-errors (close stream))
      (ignore-errors (sb-bsd-sockets:socket-close socket)))))

(defun %accept-loop (handle registry)
  (let ((listener (metrics-server-socket handle)))
    (loop
      (sb-thread:wait-on-semaphore (metrics-server-slots handle))
      (let ((socket (handler-case (sb-bsd-sockets:socket-accept listener)
                      (error (e)
                        (sb-thread:signal-semaphore (metrics-server-slots handle))
                        (when (metrics-server-stopped handle)
                          (return))
                        (clgrpc.util:log-line "metrics scrape endpoint: accept failed: ~A" e)
                        (sleep 0.1)
                        nil))))
        (cond ((and socket (metrics-server-stopped handle))
               (ignore-errors (sb-bsd-sockets:socket-close socket))
               (return))
              (socket
               (sb-thread:with-mutex ((metrics-server-lock handle))
                 (push socket (metrics-server-active handle)))
               (sb-thread:make-thread
                (lambda ()
                  (unwind-protect (%serve-scrape registry socket)
                    (sb-thread:with-mutex ((metrics-server-lock handle))
                      (setf (metrics-server-active handle) (remove socket (metrics-server-active handle))))
                    (sb-thread:signal-semaphore (metrics-server-slots handle))))
                :name "metrics scrape"))
              (t (sb-thread:signal-semaphore (metrics-server-slots handle))))))))

(defun serve-metrics (registry &key (host "127.0.0.1") (port 0))
  "Serve REGISTRY to Prometheus scrapes (GET /metrics) on HOST (a name or
an IPv4 or IPv6 address) and PORT: four at once, each given 5 s and 8 KiB
for its request.  Returns a handle for STOP-METRICS; its port is
(METRICS-SERVER-PORT handle)."
  (let* ((address (clgrpc.net:resolve-host host))
         (listener (make-instance (if (= (length address) 16)
                                      'sb-bsd-sockets:inet6-socket
                                      'sb-bsd-sockets:inet-socket)
                                  :type :stream :protocol :tcp)))
    (setf (sb-bsd-sockets:sockopt-reuse-address listener) t)
    (handler-bind ((error (lambda (e) (declare (ignore e)) (sb-bsd-sockets:socket-close listener))))
      (sb-bsd-sockets:socket-bind listener address port)
      (sb-bsd-sockets:socket-listen listener 16))
    (let ((handle (%make-metrics-server listener (nth-value 1 (sb-bsd-sockets:socket-name listener)))))
      (setf (metrics-server-thread handle)
            (sb-thread:make-thread #'%accept-loop :name "metrics scrape endpoint"
                                                  :arguments (list handle registry)))
      handle)))

(defun stop-metrics (handle)
  "Stop serving scrapes, ending those being answered."
  (setf (metrics-server-stopped handle) t)
  ;; Shutting the sockets down wakes the accept and the reads; closing
  ;; alone would not.
  (ignore-errors (sb-bsd-sockets:socket-shutdown (metrics-server-socket handle) :direction :io))
  (ignore-errors (sb-bsd-sockets:socket-close (metrics-server-socket handle)))
  (dolist (socket (sb-thread:with-mutex ((metrics-server-lock handle))
                    (copy-list (metrics-server-active handle))))
    (ignore-errors (sb-bsd-sockets:socket-shutdown socket :direction :io)))
  ;; An accept loop waiting for a slot is let through to see the stop.
  (sb-thread:signal-semaphore (metrics-server-slots handle))
  (ignore-errors (sb-thread:join-thread (metrics-server-thread handle) :default nil :timeout 5))
  nil)
