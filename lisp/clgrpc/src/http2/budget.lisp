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
;;;; The process count is shared by every reactor and worker: one atomic
;;;; operation per charge and per discharge, which come per message (and
;;;; per doubling of an assembly buffer), never per frame.

(in-package #:clgrpc.http2)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defstruct (memory-budget (:constructor %make-memory-budget))
  (connection-octets 0 :type fixnum)
  (process-octets 0 :type fixnum)
  (calls-limit 0 :type fixnum)
  ;; Octets all the connections hold (atomic).
  (held 0 :type sb-ext:word)
  ;; Handler slots held across all connections (atomic).
  (calls 0 :type sb-ext:word)
  ;; Octets of responses that workers hold while they wait to send them,
  ;; because the budget had no room to park them (atomic), and their limit.
  (overdrawn 0 :type sb-ext:word)
  (overdraft-octets 0 :type fixnum))

(defun default-process-octets ()
  "A quarter of the heap: the garbage collector needs room beside what
streams hold, and the rest of the program some of its own."
  (floor (sb-ext:dynamic-space-size) 4))

(defun make-memory-budget (&key (connection-octets (* 64 1024 1024))
                                (process-octets (default-process-octets))
                                (calls 65536))
  "A budget shared by the connections made with it: each may hold
CONNECTION-OCTETS for its streams, all of them together PROCESS-OCTETS, and
at most CALLS handlers may be in flight across them.  Workers waiting to
send responses that did not fit may hold an eighth of PROCESS-OCTETS more
(CLAIM-SENDER-OVER-BUDGET)."
  (check-type connection-octets (integer 0 #.most-positive-fixnum))
  (check-type process-octets (integer 0 #.most-positive-fixnum))
  (check-type calls (integer 1 #.most-positive-fixnum))
  (%make-memory-budget :connection-octets connection-octets
                       :process-octets process-octets
                       :overdraft-octets (floor process-octets 8)
                       :calls-limit calls))

(defmacro %add-within (place octets limit)
  "Add OCTETS to the word at PLACE, atomically, unless that would pass
LIMIT.  True if added."
  (let ((held (gensym "HELD")) (n (gensym "N")) (most (gensym "LIMIT")))
    `(let ((,n ,octets) (,most ,limit))
       (declare (type fixnum ,n ,most))
       (loop
         (let ((,held ,place))
           (when (> (+ ,held ,n) ,most)
             (return nil))
           (when (= ,held (sb-ext:compare-and-swap ,place ,held (+ ,held ,n)))
             (return t)))))))

(defun %take-octets (budget octets &optional parking)
  "Add OCTETS to what BUDGET's connections hold, unless that would pass its
process limit (for a response PARKING, seven eighths of it).  True if
added."
  (declare (type memory-budget budget) (type fixnum octets))
  (let ((limit (memory-budget-process-octets budget)))
    (%add-within (memory-budget-held budget) octets
                 (if parking (- limit (ash limit -3)) limit))))

(defun %force-charge (conn octets)
  "Lock held: charge OCTETS to CONN and the process past their limits."
  (declare (type fixnum octets))
  (incf (conn-budget-held conn) octets)
  (let ((budget (conn-budget conn)))
    (when budget
      (sb-ext:atomic-incf (memory-budget-held (the memory-budget budget)) octets))))

(defun %connection-charge (conn octets &optional parking)
  "Lock held: charge OCTETS to CONN's and the process's budgets.  True if
they fit; NIL, charging nothing, if either is full or CONN has closed.  A
connection with no budget counts what it holds all the same.  A response
PARKING for its peer's window may fill the process's budget only to seven
eighths: responses that peers do not read cannot keep out the requests of
peers that do."
  (declare (type fixnum octets))
  (let ((budget (conn-budget conn)))
    (cond ((conn-closed conn) nil)
          ((null budget)
           (%force-charge conn octets)
           t)
          ((> (+ (conn-budget-held conn) octets)
              (memory-budget-connection-octets (the memory-budget budget)))
           nil)
          ((not (%take-octets budget octets parking)) nil)
          (t
           (incf (conn-budget-held conn) octets)
           t))))

(defun %connection-discharge (conn octets)
  "Lock held: give back OCTETS charged to CONN."
  (declare (type fixnum octets))
  (when (plusp octets)
    (decf (conn-budget-held conn) octets)
    (let ((budget (conn-budget conn)))
      (when budget
        (sb-ext:atomic-decf (memory-budget-held (the memory-budget budget)) octets)))))

(defun stream-charge (conn stream octets &key parking)
  "Lock held: charge OCTETS the application holds for STREAM to CONN's and
the process's budgets (PARKING: a response waiting for window, which
leaves the process's last eighth to others).  True if they fit; NIL,
charging nothing, if either is full or CONN has closed.  A closed stream
has given back what it held, and is charged nothing more (a client's last
message may arrive with the END_STREAM that closes it)."
  (declare (type h2-stream stream) (type fixnum octets))
  (cond ((eq (h2-stream-state stream) :closed) (not (conn-closed conn)))
        ((%connection-charge conn octets parking)
         (incf (h2-stream-held stream) octets)
         t)))

(defun stream-discharge (conn stream octets)
  "Lock held: the application no longer holds OCTETS it charged for
STREAM.  Never more than the stream still holds: what it held went back
when it was over."
  (declare (type h2-stream stream) (type fixnum octets))
  (let ((n (min octets (h2-stream-held stream))))
    (declare (type fixnum n))
    (when (plusp n)
      (decf (h2-stream-held stream) n)
      (%connection-discharge conn n))))

;;; A header block that arrives in CONTINUATION frames is assembled by the
;;; connection, for no stream yet.  Each connection's block is bounded
;;; (HEADER-BLOCK-LIMIT), but connections are not: the block is charged too.

(defun charge-header-block (conn buf)
  "CONN's header block being assembled in BUF grew: charge the growth.  A
block cannot be refused in part (the HPACK state depends on all of it).
Past CONN's own budget the peer holds too much, and the connection ends;
past the process's, filled by others, the block is charged all the same
(it is bounded, HEADER-BLOCK-LIMIT), and the stream it opens is refused
as any new stream is then."
  (with-connection-lock (conn)
    (let ((more (- (length (obuf-data buf)) (conn-cont-held conn)))
          (budget (conn-budget conn)))
      (when (plusp more)
        (cond ((%connection-charge conn more))
              ((or (conn-closed conn)
                   (> (+ (conn-budget-held conn) more)
                      (memory-budget-connection-octets (the memory-budget budget))))
               (connection-error +enhance-your-calm+
                                 "memory budget full: no room for a header block of ~D octets"
                                 (length (obuf-data buf))))
              (t (%force-charge conn more)))
        (incf (conn-cont-held conn) more)))))

(defun discharge-header-block (conn)
  "Lock held: CONN's assembled header block is decoded, or never will be."
  (%connection-discharge conn (shiftf (conn-cont-held conn) 0)))

;;; Decoded headers cost more than the octets SETTINGS_MAX_HEADER_LIST_SIZE
;;; counts (name, value and 32 a field): each character takes 4 octets in
;;; a Lisp string, and a field has two string headers and two conses.

(defconstant +decoded-header-factor+ 4
  "A bound on the octets a decoded header list takes, over its size as
SETTINGS_MAX_HEADER_LIST_SIZE counts it: 4(n+v) + 64 <= 4(n+v+32).")

(declaim (inline decoded-header-octets))
(defun decoded-header-octets (list-size)
  (* +decoded-header-factor+ list-size))

(defun stream-discharge-all (conn stream)
  "Lock held: STREAM is over, and its handler too: what it held goes back."
  (stream-discharge conn stream (h2-stream-held stream)))

(defun budget-admits-stream-p (conn)
  "Lock held: a new peer stream may open, as far as the budgets go: neither
CONN nor the process is full, and fewer calls than the limit are in
flight."
  (let ((budget (conn-budget conn)))
    (or (null budget)
        (and (< (conn-budget-held conn)
                (memory-budget-connection-octets (the memory-budget budget)))
             (< (memory-budget-held (the memory-budget budget))
                (memory-budget-process-octets (the memory-budget budget)))
             (< (memory-budget-calls (the memory-budget budget))
                (memory-budget-calls-limit (the memory-budget budget)))))))

(defun %count-call (conn delta)
  (let ((budget (conn-budget conn)))
    (when budget
      (if (plusp delta)
          (sb-ext:atomic-incf (memory-budget-calls (the memory-budget budget)) 1)
          (sb-ext:atomic-decf (memory-budget-calls (the memory-budget budget)) 1)))))

;;; Responses that do not fit parked.  A worker may send one as a streaming
;;; sender does, waiting for window while it holds the response: a client
;;; that reads is served, as grpc-go serves it.  Such responses are held
;;; beyond the budget, so a connection may have only a few of them waiting,
;;; and all connections together an overdraft of an eighth of the process
;;; budget: otherwise enough connections, each within its own few, would
;;; hold as much as they liked.  (The overdraft counts the encoded
;;; response; the handler's response object is held beside it.)  A
;;; response larger than the whole overdraft may wait alone.  Beyond
;;; these the call fails (a peer that reads nothing gets nothing for its
;;; extra calls but RESOURCE_EXHAUSTED).

(defconstant +senders-over-budget+ 4
  "Workers per connection that may wait to send a response the budget had
no room to park.")

(defun claim-sender-over-budget (conn octets)
  "Lock held: true if one more worker of CONN may wait to send a response
of OCTETS that did not fit parked; RELEASE-SENDER-OVER-BUDGET with the same
OCTETS when it is done."
  (declare (type fixnum octets))
  (let ((budget (conn-budget conn)))
    (when (and (< (conn-senders-over-budget conn) +senders-over-budget+)
               (or (null budget)
                   (%add-within (memory-budget-overdrawn (the memory-budget budget)) octets
                                (memory-budget-overdraft-octets (the memory-budget budget)))
                   ;; A response larger than the whole overdraft may still
                   ;; go, alone: otherwise it never could.
                   (zerop (sb-ext:compare-and-swap
                           (memory-budget-overdrawn (the memory-budget budget)) 0 octets))))
      (incf (conn-senders-over-budget conn))
      t)))

(defun release-sender-over-budget (conn octets)
  "Lock held."
  (declare (type fixnum octets))
  (decf (conn-senders-over-budget conn))
  (let ((budget (conn-budget conn)))
    (when budget
      (sb-ext:atomic-decf (memory-budget-overdrawn (the memory-budget budget)) octets))))
