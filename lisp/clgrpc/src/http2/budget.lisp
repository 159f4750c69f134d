;;;; Memory budgets: how many octets the application may hold for streams,
;;;; per connection and per process, and how many calls may be in flight.
;;;;
;;;; Flow control bounds what a peer may send before we read it, not what we
;;;; keep once read: messages being assembled, requests whose handler has
;;;; not finished, messages queued for a receiver, responses parked until
;;;; the peer opens a window, and the decoded headers of open streams.  The
;;;; application charges such octets to the stream that holds them
;;;; (STREAM-CHARGE) and gives them back when done (STREAM-DISCHARGE);
;;;; whatever a stream still holds goes back when it closes, so no path can
;;;; leak a charge.  A charge that would take the connection past its limit,
;;;; or the process past its own, is refused: the caller fails that one call
;;;; (RESOURCE_EXHAUSTED), and new streams are refused (REFUSED_STREAM) while
;;;; their headers do not fit.  One peer can thus hold at most its
;;;; connection's share, and a peer on another connection is still answered.
;;;;
;;;; Every reactor and worker shares the process count, so a connection
;;;; takes it in grains of a MiB (one atomic operation per grain, not per
;;;; message) and keeps at most one grain spare.

(in-package #:clgrpc.http2)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +budget-grain+ (* 1024 1024))

(defstruct (memory-budget (:constructor %make-memory-budget))
  (connection-octets 0 :type fixnum)
  (process-octets 0 :type fixnum)
  (calls-limit 0 :type fixnum)
  ;; Octets the connections took from PROCESS-OCTETS, in grains (atomic).
  (reserved 0 :type sb-ext:word)
  ;; Handler slots held across all connections (atomic).
  (calls 0 :type sb-ext:word))

(defun default-process-octets ()
  "A quarter of the heap: the garbage collector needs room beside what
streams hold, and the rest of the program some of its own."
  (floor (sb-ext:dynamic-space-size) 4))

(defun make-memory-budget (&key (connection-octets (* 64 1024 1024))
                                (process-octets (default-process-octets))
                                (calls 65536))
  "A budget shared by the connections made with it: each may hold
CONNECTION-OCTETS for its streams, all of them together PROCESS-OCTETS, and
at most CALLS handlers may be in flight across them."
  (check-type connection-octets (integer 0 #.most-positive-fixnum))
  (check-type process-octets (integer 0 #.most-positive-fixnum))
  (check-type calls (integer 1 #.most-positive-fixnum))
  (%make-memory-budget :connection-octets connection-octets
                       :process-octets process-octets
                       :calls-limit calls))

(defvar *default-memory-budget* nil
  "The budget of connections made without one (a client's); made on first
use, since the heap's size is known only at run time.")

(defun default-memory-budget ()
  (or *default-memory-budget*
      (setf *default-memory-budget* (make-memory-budget))))

(defun memory-budget-held (budget)
  "Octets the connections of BUDGET have taken from the process's share,
rounded up to grains: what the process holds for streams, give or take a
grain per connection."
  (memory-budget-reserved budget))

(defun %take-grains (budget octets)
  (declare (type memory-budget budget) (type fixnum octets))
  (let ((before (sb-ext:atomic-incf (memory-budget-reserved budget) octets)))
    (declare (type sb-ext:word before))
    (or (<= (+ before octets) (memory-budget-process-octets budget))
        (progn (sb-ext:atomic-decf (memory-budget-reserved budget) octets)
               nil))))

(defun %return-grains (conn keep)
  "Lock held: give back to the process what CONN reserved beyond KEEP."
  (declare (type fixnum keep))
  (let ((spare (- (conn-budget-reserved conn) keep))
        (budget (conn-budget conn)))
    (declare (type fixnum spare))
    (when (and (plusp spare) budget)
      (sb-ext:atomic-decf (memory-budget-reserved (the memory-budget budget)) spare)
      (decf (conn-budget-reserved conn) spare))))

(defun %grains-for (octets)
  (declare (type fixnum octets))
  (* +budget-grain+ (ceiling octets +budget-grain+)))

(defun stream-charge (conn stream octets)
  "Lock held: charge OCTETS the application holds for STREAM to CONN's and
the process's budgets.  True if they fit; NIL, charging nothing, if either
is full or CONN has closed."
  (declare (type h2-stream stream) (type fixnum octets))
  (let ((budget (conn-budget conn)))
    (cond ((conn-closed conn) nil)
          ((null budget) t)
          (t
           (let ((held (+ (conn-budget-held conn) octets)))
             (declare (type fixnum held))
             (when (> held (memory-budget-connection-octets (the memory-budget budget)))
               (return-from stream-charge nil))
             (when (> held (conn-budget-reserved conn))
               (let ((more (- (%grains-for held) (conn-budget-reserved conn))))
                 (unless (%take-grains budget more)
                   (return-from stream-charge nil))
                 (incf (conn-budget-reserved conn) more)))
             (setf (conn-budget-held conn) held)
             (incf (h2-stream-held stream) octets)
             t)))))

(defun %trim-grains (conn)
  "Lock held: CONN keeps the grains it holds octets in, and one spare while
it is open."
  (let ((keep (%grains-for (conn-budget-held conn))))
    (%return-grains conn (if (conn-closed conn) keep (+ keep +budget-grain+)))))

(defun stream-discharge (conn stream octets)
  "Lock held: the application no longer holds OCTETS it charged for
STREAM.  Never more than the stream still holds: what it held went back
when it was over."
  (declare (type h2-stream stream) (type fixnum octets))
  (let ((n (min octets (h2-stream-held stream))))
    (declare (type fixnum n))
    (when (plusp n)
      (decf (h2-stream-held stream) n)
      (decf (conn-budget-held conn) n)
      (%trim-grains conn))))

(defun stream-discharge-all (conn stream)
  "Lock held: STREAM is over, and its handler too: what it held goes back."
  (stream-discharge conn stream (h2-stream-held stream)))

(defun release-connection-budget (conn)
  "Lock held, CONN closed and its streams with it: its spare grain goes
back.  Octets that handlers still running hold stay counted until they end."
  (%trim-grains conn))

(defun budget-admits-stream-p (conn)
  "Lock held: a new peer stream may open, as far as the budgets go: CONN
is not full, and fewer calls than the limit are in flight."
  (let ((budget (conn-budget conn)))
    (or (null budget)
        (and (< (conn-budget-held conn)
                (memory-budget-connection-octets (the memory-budget budget)))
             (< (memory-budget-calls (the memory-budget budget))
                (memory-budget-calls-limit (the memory-budget budget)))))))

(defun %count-call (conn delta)
  (let ((budget (conn-budget conn)))
    (when budget
      (if (plusp delta)
          (sb-ext:atomic-incf (memory-budget-calls (the memory-budget budget)) 1)
          (sb-ext:atomic-decf (memory-budget-calls (the memory-budget budget)) 1)))))
