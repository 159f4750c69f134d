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
  (if (integerp x)
      (format nil "~D" x)
      (let ((*read-default-float-format* 'double-float))
        (format nil "~F" (float x 1d0)))))

(defun prometheus-text (registry)
  "The text a Prometheus scrape of REGISTRY reads."
  (with-output-to-string (out)
    (sb-thread:with-mutex ((registry-lock registry))
      (let ((instruments (sort (loop for i being the hash-values of (registry-instruments registry) collect i)
                               #'string< :key #'instrument-name)))
        (dolist (instrument instruments)
          (let ((name (%prometheus-name instrument))
                (labels (instrument-labels instrument))
                (series (sort (loop for values being the hash-keys of (instrument-series instrument)
                                      using (hash-value s) collect (cons values s))
                              #'string< :key (lambda (e) (format nil "~{~A~^,~}" (car e))))))
            (format out "# HELP ~A ~A~%# TYPE ~A ~(~A~)~%" name (instrument-help instrument) name
                    (instrument-kind instrument))
            (loop for (values . s) in series
                  do (if (eq (instrument-kind instrument) :counter)
                         (progn (write-string name out) (%write-labels out labels values)
                                (format out " ~A~%" (%number (series-count s))))
                         (let ((cumulative 0))
                           (loop for bound across (instrument-buckets instrument)
                                 for n across (series-buckets s)
                                 do (incf cumulative n)
                                    (format out "~A_bucket" name)
                                    (%write-labels out labels values (%number bound))
                                    (format out " ~D~%" cumulative))
                           (format out "~A_bucket" name)
                           (%write-labels out labels values "+Inf")
                           (format out " ~D~%~A_sum" (series-count s) name)
                           (%write-labels out labels values)
                           (format out " ~A~%~A_count" (%number (series-sum s)) name)
                           (%write-labels out labels values)
                           (format out " ~D~%" (series-count s)))))))))))

;;; ------------------------------------------------------------------
;;; The scrape endpoint

(defstruct (metrics-server (:constructor %make-metrics-server (socket thread port)))
  socket thread port)

(defconstant +max-request-octets+ 8192
  "A scrape's request head, at most; a longer one is answered 431.")

(defun %read-request-head (stream)
  "The request line of an HTTP/1.1 request head read from STREAM (octets
decoded as Latin-1), or NIL if it ends early or runs past the limit."
  (let ((head (make-array 0 :element-type 'character :adjustable t :fill-pointer 0)))
    (loop for octet = (read-byte stream nil nil)
          do (cond ((null octet) (return nil))
                   ((>= (length head) +max-request-octets+) (return :too-long))
                   (t (vector-push-extend (code-char octet) head)))
             (when (and (>= (length head) 4) (string= (subseq head (- (length head) 4)) (format nil "~C~C~C~C" #\Return #\Newline #\Return #\Newline)))
               (return (subseq head 0 (or (position #\Return head) 0)))))))

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

(defun %serve-scrape (registry socket)
  (let ((stream (sb-bsd-sockets:socket-make-stream socket :input t :output t
                                                          :element-type '(unsigned-byte 8)
                                                          :timeout 5)))
    (unwind-protect
         (handler-case
             (let ((line (%read-request-head stream)))
               (cond ((eq line :too-long) (%answer stream "431 Request Header Fields Too Large" ""))
                     ((null line))
                     ((or (eql 0 (search "GET /metrics " line)) (string= line "GET /metrics"))
                      (%answer stream "200 OK" (prometheus-text registry)
                               "text/plain; version=0.0.4; charset=utf-8"))
                     (t (%answer stream "404 Not Found" (format nil "Metrics are at GET /metrics.~%")))))
           (error () nil))
      (ignore-errors (close stream))
      (ignore-errors (sb-bsd-sockets:socket-close socket)))))

(defun serve-metrics (registry &key (host "127.0.0.1") (port 0))
  "Serve REGISTRY to Prometheus scrapes (GET /metrics) on HOST:PORT, one
request at a time, each bounded (5 s, 8 KiB of request head).  Returns a
handle for STOP-METRICS; its port is (METRICS-SERVER-PORT handle)."
  (let ((listener (make-instance 'sb-bsd-sockets:inet-socket :type :stream :protocol :tcp)))
    (setf (sb-bsd-sockets:sockopt-reuse-address listener) t)
    (sb-bsd-sockets:socket-bind listener (sb-bsd-sockets:make-inet-address host) port)
    (sb-bsd-sockets:socket-listen listener 16)
    (let ((thread (sb-thread:make-thread
                   (lambda ()
                     (loop (let ((socket (handler-case (sb-bsd-sockets:socket-accept listener)
                                           (error () (return)))))
                             (when socket
                               (%serve-scrape registry socket)))))
                   :name "metrics scrape")))
      (%make-metrics-server listener thread (nth-value 1 (sb-bsd-sockets:socket-name listener))))))

(defun stop-metrics (handle)
  "Stop serving scrapes."
  ;; Shutting the listener down wakes the accept; closing alone would not.
  (ignore-errors (sb-bsd-sockets:socket-shutdown (metrics-server-socket handle) :direction :io))
  (ignore-errors (sb-bsd-sockets:socket-close (metrics-server-socket handle)))
  (ignore-errors (sb-thread:join-thread (metrics-server-thread handle) :default nil :timeout 5))
  nil)
