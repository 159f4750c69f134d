;;;; The four RouteGuide methods, answering exactly like
;;;; go/routeguide/service: the same validation and error messages, the same
;;;; results, the same note store limits.  Only the service logic is here;
;;;; all the protocol work is clgrpc's.

(in-package #:routeguide)

(defconstant +max-notes-per-location+ 32)
(defconstant +max-locations+ 4096)

(defstruct (service (:constructor %make-service))
  (db nil :type feature-db)
  ;; RouteChat notes: location key -> notes oldest first, and locations in
  ;; first-stored order for eviction.
  (lock (sb-thread:make-mutex :name "routeguide notes"))
  (notes (make-hash-table :test 'eql))
  (order (clgrpc.util:make-fifo 64)))

(defun make-service (&optional (db (default-features)))
  (%make-service :db db))

(defun check-point (field point)
  "POINT's coordinates, or INVALID_ARGUMENT as the Go service words it."
  (unless point
    (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+invalid-argument+ "~A is required" field))
  (let ((latitude (point-latitude point))
        (longitude (point-longitude point)))
    (unless (<= (- +max-latitude+) latitude +max-latitude+)
      (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+invalid-argument+
                                    "~A: latitude ~D out of range [~D, ~D] (E7 degrees)"
                                    field latitude (- +max-latitude+) +max-latitude+))
    (unless (<= (- +max-longitude+) longitude +max-longitude+)
      (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+invalid-argument+
                                    "~A: longitude ~D out of range [~D, ~D] (E7 degrees)"
                                    field longitude (- +max-longitude+) +max-longitude+))
    (values latitude longitude)))

(defun get-feature (service point call)
  (declare (ignore call))
  (multiple-value-bind (latitude longitude) (check-point "point" point)
    (or (lookup-feature (service-db service) latitude longitude)
        (make-feature :location (make-point :latitude latitude :longitude longitude)))))

(defun list-features (service rectangle call)
  (unless rectangle
    (clgrpc.grpc:raise-grpc-error clgrpc.grpc:+invalid-argument+ "rectangle is required"))
  (multiple-value-bind (lo-lat lo-lng) (check-point "rectangle.lo" (rectangle-lo rectangle))
    (multiple-value-bind (hi-lat hi-lng) (check-point "rectangle.hi" (rectangle-hi rectangle))
      (let ((min-lat (min lo-lat hi-lat)) (max-lat (max lo-lat hi-lat))
            (min-lng (min lo-lng hi-lng)) (max-lng (max lo-lng hi-lng)))
        (loop for f across (feature-db-features (service-db service))
              do (let ((p (feature-location f)))
                   (when (and (<= min-lat (point-latitude p) max-lat)
                              (<= min-lng (point-longitude p) max-lng))
                     ;; CALL-SEND signals once the client cancels or the
                     ;; deadline passes, which ends the stream.
                     (clgrpc.grpc:call-send call f))))))))

(defun distance-meters (lat1 lng1 lat2 lng2)
  "Haversine distance, with the Go code's operation order so results agree."
  (flet ((rad (e7) (/ (* (/ (float e7 1d0) 1d7) pi) 180d0)))
    (let* ((phi1 (rad lat1)) (phi2 (rad lat2))
           (dlat (- phi2 phi1))
           (dlng (- (rad lng2) (rad lng1)))
           (a (+ (* (sin (/ dlat 2)) (sin (/ dlat 2)))
                 (* (cos phi1) (cos phi2) (sin (/ dlng 2)) (sin (/ dlng 2)))))
           (c (* 2 (atan (sqrt a) (sqrt (- 1 a))))))
      (truncate (* 6371000d0 c)))))

(defun saturate (n) (min n 2147483647))

(defstruct (route-progress (:constructor make-route-progress ()))
  "What RecordRoute has gathered of a route so far."
  (points 0) (found 0) (distance 0) (last-lat 0) (last-lng 0))

(defun record-route (service point call)
  "RecordRoute, called per point (clgrpc's :EACH-MESSAGE, so no thread waits
between points; NIL when the client is done).  The route so far is kept in
the call's state, and the last call returns its summary, timed from the
call's start as the Go server times it."
  (let ((route (or (clgrpc.grpc:call-state call)
                   (setf (clgrpc.grpc:call-state call) (make-route-progress)))))
    (if point
        (multiple-value-bind (latitude longitude) (check-point "point" point)
          (when (lookup-feature (service-db service) latitude longitude)
            (incf (route-progress-found route)))
          (when (plusp (route-progress-points route))
            (incf (route-progress-distance route)
                  (distance-meters (route-progress-last-lat route) (route-progress-last-lng route)
                                   latitude longitude)))
          (setf (route-progress-last-lat route) latitude
                (route-progress-last-lng route) longitude)
          (incf (route-progress-points route))
          nil)
        (make-route-summary
         :point-count (saturate (route-progress-points route))
         :feature-count (saturate (route-progress-found route))
         :distance (saturate (route-progress-distance route))
         :elapsed-time (saturate (floor (- (clgrpc.util:now-us) (clgrpc.grpc:call-start-us call))
                                        1000000))))))

(defun add-note (service latitude longitude note)
  "Store NOTE at its location; returns the notes stored there before it."
  (let ((key (point-key latitude longitude)))
    (sb-thread:with-mutex ((service-lock service))
      (multiple-value-bind (notes known) (gethash key (service-notes service))
        (unless known
          (when (>= (hash-table-count (service-notes service)) +max-locations+)
            (remhash (clgrpc.util:fifo-pop (service-order service)) (service-notes service)))
          (clgrpc.util:fifo-push (service-order service) key))
        (setf (gethash key (service-notes service))
              (if (< (length notes) +max-notes-per-location+)
                  (append notes (list note))
                  (append (rest notes) (list note))))
        notes))))

(defun route-chat (service note call)
  "RouteChat, called per note (clgrpc's :EACH-MESSAGE, so no thread waits
between notes; NIL when the client is done): every earlier note at its
location goes back."
  (when note
    (multiple-value-bind (latitude longitude)
        (check-point "note.location" (route-note-location note))
      (dolist (earlier (add-note service latitude longitude note))
        (clgrpc.grpc:call-send call earlier)))))

(defun register-service (server &key (service (make-service)) inline)
  "Serve SERVICE's four methods on the clgrpc SERVER.  INLINE declares
GetFeature, a lookup in memory, inline (clgrpc's REGISTER-METHOD): it then
runs on the reactor that read its request."
  (register-route-guide server
                        :get-feature (lambda (p call) (get-feature service p call))
                        :list-features (lambda (r call) (list-features service r call))
                        :record-route (lambda (point call) (record-route service point call))
                        :route-chat (lambda (note call) (route-chat service note call))
                        :inline (and inline '(:get-feature))
                        :each-message '(:record-route :route-chat)))
