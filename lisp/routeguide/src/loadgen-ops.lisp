;;;; The load generator's operations, the same as go/routeguide/loadgen's
;;;; (ops.go, workload.go): one call of each RPC kind with fixed inputs,
;;;; every answer checked, so that a server answering wrongly shows up as
;;;; errors and never as a fast run.  An operation returns the number of
;;;; messages it moved in its streaming direction(s), and signals on any
;;;; failure.

(in-package #:routeguide.loadgen)

(defvar *op-timeout* 30
  "Seconds any one call may take: a server that never answers fails the
call instead of holding a worker for ever.")

(defparameter *rpc-kinds* '("unary" "server_streaming" "client_streaming" "bidi_streaming")
  "The RPC kinds, in the order of the results; -rpcs also takes \"bidi\".")

(defstruct (workload (:constructor %make-workload))
  (stream-msgs 10 :type fixnum)         ; points per RecordRoute, notes per RouteChat
  (known-name "" :type string)          ; GetFeature(known-point)'s name
  (listed 0 :type fixnum)               ; features per ListFeatures(demo-area)
  (route '() :type list)                ; RecordRoute's points, all database locations
  (chat-replies 0 :type fixnum)         ; notes back per RouteChat call
  (chat-text #() :type simple-vector)
  ;; RouteChat locations nobody used: a random longitude for the run, and
  ;; a latitude counted up from the southern limit (see next-chat-spot).
  (spot-longitude 0 :type fixnum)
  (spots-used (list 0) :type cons))

(defun within-p (point rectangle)
  (let ((lo (rectangle-lo rectangle)) (hi (rectangle-hi rectangle)))
    (and (<= (min (point-latitude lo) (point-latitude hi)) (point-latitude point)
             (max (point-latitude lo) (point-latitude hi)))
         (<= (min (point-longitude lo) (point-longitude hi)) (point-longitude point)
             (max (point-longitude lo) (point-longitude hi))))))

(defun chat-replies-for (n per-location)
  "Notes a RouteChat call gets back for N notes at a fresh location: note i
brings back min(i, PER-LOCATION) earlier ones."
  (loop for i below n sum (min i per-location)))

(defun make-workload (stream-msgs &optional (db (default-features)))
  (let ((known (lookup-feature db (point-latitude (known-point)) (point-longitude (known-point)))))
    (unless (and known (plusp (length (feature-name known))))
      (error "the standard database has no named feature at the GetFeature point"))
    (%make-workload
     :stream-msgs stream-msgs
     :known-name (feature-name known)
     :listed (count-if (lambda (f) (within-p (feature-location f) (demo-area)))
                       (feature-db-features db))
     :route (route stream-msgs +route-seed+ db)
     :chat-replies (chat-replies-for stream-msgs +max-notes-per-location+)
     :chat-text (coerce (loop for i below stream-msgs collect (format nil "note ~D" i)) 'simple-vector)
     :spot-longitude (- (random (1+ (* 2 +max-longitude+)) (make-random-state t)) +max-longitude+))))

(defun msgs-per-call (workload kind)
  "What the stream_msgs parameter records: messages per call in its
streaming direction, 1 for unary."
  (cond ((string= kind "server_streaming") (workload-listed workload))
        ((string= kind "unary") 1)
        (t (workload-stream-msgs workload))))

(defun next-chat-spot (workload)
  "A location no other call of this run has used.  Thread-safe."
  (let ((n (1- (sb-ext:atomic-incf (car (workload-spots-used workload))))))
    (make-point :latitude (- (mod n (1+ (* 2 +max-latitude+))) +max-latitude+)
                :longitude (workload-spot-longitude workload))))

(defun op-fail (format-control &rest args)
  (error 'client-error :message (apply #'format nil format-control args)))

(defun op-get-feature (channel workload)
  (let ((f (route-guide-get-feature channel (known-point) :timeout *op-timeout*)))
    (unless (and (string= (feature-name f) (workload-known-name workload))
                 (equalp (feature-location f) (known-point)))
      (op-fail "GetFeature: got ~S at ~A, want ~S" (feature-name f)
               (fmt-point (feature-location f)) (workload-known-name workload)))
    1))

(defun op-list-features (channel workload)
  (let ((call (route-guide-list-features channel (demo-area) :timeout *op-timeout*))
        (got 0))
    (loop for f = (clgrpc.grpc:call-recv call)
          while f
          do (unless (and (feature-location f) (within-p (feature-location f) (demo-area)))
               (clgrpc.grpc:call-cancel call)
               (op-fail "ListFeatures: feature ~S at ~A lies outside the rectangle"
                        (feature-name f) (fmt-point (feature-location f))))
             (incf got))
    (unless (= got (workload-listed workload))
      (op-fail "ListFeatures: got ~D features, want ~D" got (workload-listed workload)))
    got))

(defun op-record-route (channel workload)
  (let ((call (route-guide-record-route channel :timeout *op-timeout*))
        (want (length (workload-route workload))))
    (dolist (p (workload-route workload))
      (clgrpc.grpc:call-send call p))
    (let ((summary (clgrpc.grpc:call-close-and-recv call)))
      (unless (= want (route-summary-point-count summary) (route-summary-feature-count summary))
        (op-fail "RecordRoute: summary counts ~D points and ~D features, want ~D"
                 (route-summary-point-count summary) (route-summary-feature-count summary) want))
      want)))

(defconstant +chat-send-first-limit+ 256
  "Up to this many notes a call sends them all before reading: the replies
(at most 32 per note, a few dozen octets each) fit clgrpc's 1 MiB stream
window, so the server never blocks on us, and no thread is needed.")

(defun op-route-chat (channel workload)
  (let* ((spot (next-chat-spot workload))
         (call (route-guide-route-chat channel :timeout *op-timeout*))
         (got 0))
    (flet ((send-all ()
             (loop for text across (workload-chat-text workload)
                   do (clgrpc.grpc:call-send call (make-route-note :location spot :message text)))
             (clgrpc.grpc:call-close-send call)))
      (let ((sender (if (<= (workload-stream-msgs workload) +chat-send-first-limit+)
                        (progn (send-all) nil)
                        ;; Many notes: send while receiving, as the Go load
                        ;; generator does, or both windows could fill.
                        (sb-thread:make-thread (lambda () (handler-case (send-all) (error (e) e)))
                                               :name "RouteChat sender"))))
        (unwind-protect
             (loop for n = (clgrpc.grpc:call-recv call)
                   while n
                   do (unless (equalp (route-note-location n) spot)
                        (op-fail "RouteChat: reply ~S is at ~A, want ~A" (route-note-message n)
                                 (fmt-point (route-note-location n)) (fmt-point spot)))
                      (incf got))
          (when sender
            (clgrpc.grpc:call-cancel call)
            (sb-thread:join-thread sender :default nil)))))
    (unless (= got (workload-chat-replies workload))
      (op-fail "RouteChat: got ~D replies to ~D notes, want ~D" got
               (workload-stream-msgs workload) (workload-chat-replies workload)))
    (+ got (workload-stream-msgs workload))))

(defun operation (kind)
  "The function (channel workload) -> messages for KIND."
  (cond ((string= kind "unary") #'op-get-feature)
        ((string= kind "server_streaming") #'op-list-features)
        ((string= kind "client_streaming") #'op-record-route)
        ((string= kind "bidi_streaming") #'op-route-chat)
        (t (error "unknown RPC kind ~S" kind))))
