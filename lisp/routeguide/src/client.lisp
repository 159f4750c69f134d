;;;; The four client calls and their report, line for line the report of
;;;; go/routeguide/rgclient (same inputs, same wording, same %q quoting), so
;;;; that the Lisp and the Go client can be compared by their output.  A
;;;; failed call becomes a CLIENT-ERROR worded like the Go client's errors.

(in-package #:routeguide.client)

(define-condition client-error (error)
  ((message :initarg :message :reader client-error-message))
  (:report (lambda (c stream) (write-string (client-error-message c) stream))))

(defun go-code-name (code)
  "grpc-go's name of a status code: InvalidArgument for INVALID_ARGUMENT,
and Canceled (one L) for CANCELLED."
  (let ((name (clgrpc.grpc:status-code-name code)))
    (if (string= name "CANCELLED")
        "Canceled"
        (remove #\_ (string-capitalize name)))))

(defun call-failure (what error)
  "A CLIENT-ERROR for WHAT (\"GetFeature (1, 2)\") failing with ERROR."
  (make-condition 'client-error
                  :message (typecase error
                             (clgrpc.grpc:grpc-error
                              (format nil "~A: rpc error: code = ~A desc = ~A" what
                                      (go-code-name (clgrpc.grpc:grpc-error-code error))
                                      (clgrpc.grpc:grpc-error-message error)))
                             (t (format nil "~A: ~A" what error)))))

(defmacro reporting-failure ((format-control &rest args) &body body)
  "BODY, with any error re-signalled as a CLIENT-ERROR prefixed by the call's description."
  `(handler-case (progn ,@body)
     (error (e) (error (call-failure (format nil ,format-control ,@args) e)))))

(defun fmt-point (point)
  (if point
      (format nil "(~D, ~D)" (point-latitude point) (point-longitude point))
      "(nil)"))

(defun go-quote (string)
  "STRING as Go's %q prints it (strconv.Quote): printable characters as
they are, quotes and backslashes escaped, control characters as escapes."
  (with-output-to-string (out)
    (write-char #\" out)
    (loop for c across string
          for code = (char-code c)
          do (case c
               (#\" (write-string "\\\"" out))
               (#\\ (write-string "\\\\" out))
               (#\Newline (write-string "\\n" out))
               (#\Tab (write-string "\\t" out))
               (#\Return (write-string "\\r" out))
               (t (cond ((< code 32) (format out "\\x~(~2,'0X~)" code))
                        ((= code 127) (write-string "\\x7f" out))
                        (t (write-char c out))))))
    (write-char #\" out)))

(defun remaining (deadline)
  "Seconds left until DEADLINE (internal real time), or NIL for none."
  (and deadline
       (max 1/1000000 (/ (- deadline (get-internal-real-time)) internal-time-units-per-second))))

(defun report-get-feature (channel out point deadline)
  (let ((feature (reporting-failure ("GetFeature ~A" (fmt-point point))
                   (route-guide-get-feature channel point :timeout (remaining deadline)))))
    (if (string= "" (feature-name feature))
        (format out "GetFeature ~A: no feature~%" (fmt-point point))
        (format out "GetFeature ~A: ~A~%" (fmt-point point) (go-quote (feature-name feature))))
    feature))

(defun report-list-features (channel out rectangle deadline)
  (let ((features
          (reporting-failure ("ListFeatures lo=~A hi=~A" (fmt-point (rectangle-lo rectangle))
                                                         (fmt-point (rectangle-hi rectangle)))
            (let ((call (route-guide-list-features channel rectangle :timeout (remaining deadline))))
              (loop for f = (clgrpc.grpc:call-recv call) while f collect f)))))
    (format out "ListFeatures lo=~A hi=~A: ~D features (~D named)~%"
            (fmt-point (rectangle-lo rectangle)) (fmt-point (rectangle-hi rectangle))
            (length features) (count-if (lambda (f) (plusp (length (feature-name f)))) features))
    features))

(defun report-record-route (channel out points deadline)
  (let ((summary (reporting-failure ("RecordRoute (~D points)" (length points))
                   (let ((call (route-guide-record-route channel :timeout (remaining deadline))))
                     (dolist (p points)
                       (clgrpc.grpc:call-send call p))
                     (clgrpc.grpc:call-close-and-recv call)))))
    (format out "RecordRoute sent ~D points: point_count=~D feature_count=~D distance=~D m elapsed_time=~D s~%"
            (length points) (route-summary-point-count summary) (route-summary-feature-count summary)
            (route-summary-distance summary) (route-summary-elapsed-time summary))
    summary))

(defconstant +max-notes-shown+ 10
  "Keeps the chat report short when a long-lived server has many notes.")

(defun report-route-chat (channel out notes deadline)
  ;; Send from another thread while this one receives, as the Go client
  ;; does: with many notes both directions fill their flow-control windows.
  (let ((received
          (reporting-failure ("RouteChat (~D notes)" (length notes))
            (let* ((call (route-guide-route-chat channel :timeout (remaining deadline)))
                   (sender (sb-thread:make-thread
                            (lambda ()
                              (handler-case (progn (dolist (n notes) (clgrpc.grpc:call-send call n))
                                                   (clgrpc.grpc:call-close-send call)
                                                   nil)
                                (error (e) e)))
                            :name "RouteChat sender")))
              (let ((got (handler-case (loop for n = (clgrpc.grpc:call-recv call) while n collect n)
                           (error (e)
                             (clgrpc.grpc:call-cancel call)
                             (sb-thread:join-thread sender :default nil)
                             (error e))))
                    (send-error (sb-thread:join-thread sender :default nil)))
                ;; The call succeeded (RECV saw OK), so a send that found the
                ;; stream already closed changed nothing.
                (declare (ignore send-error))
                got)))))
    (format out "RouteChat sent ~D notes, received ~D~%" (length notes) (length received))
    (loop for n in received
          for i from 0
          do (when (= i +max-notes-shown+)
               (format out "  ... and ~D more~%" (- (length received) +max-notes-shown+))
               (return))
             (format out "  ~A at ~A~%" (go-quote (route-note-message n)) (fmt-point (route-note-location n))))
    received))

(defparameter *rpc-names* '("all" "get" "list" "record" "chat")
  "The values of -rpc; \"all\" runs the others in this order.")

(defun run-client (channel out &key (rpc "all") (points 10) (timeout 10))
  "Run the RPCs RPC selects against CHANNEL, reporting each to OUT, each
step within TIMEOUT seconds (NIL: none); stops at the first CLIENT-ERROR."
  (flet ((deadline ()
           (and timeout (+ (get-internal-real-time) (round (* timeout internal-time-units-per-second))))))
    (dolist (step (if (string= rpc "all") (rest *rpc-names*) (list rpc)))
      (let ((deadline (deadline)))
        (cond ((string= step "get")
               (report-get-feature channel out (known-point) deadline)
               (report-get-feature channel out (missing-point) deadline))
              ((string= step "list") (report-list-features channel out (demo-area) deadline))
              ((string= step "record") (report-record-route channel out (route points) deadline))
              ((string= step "chat") (report-route-chat channel out (demo-notes) deadline))
              (t (error 'client-error :message (format nil "unknown RPC ~S" step))))))))
