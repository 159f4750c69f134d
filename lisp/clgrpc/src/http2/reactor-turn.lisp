;;;; One turn of a connection on its reactor: read once, process the
;;;; frames, hand their work off, and write the replies (reactor.lisp has
;;;; the whole picture).  Also what the loop does with the turns of an
;;;; epoll round once they are over: submit the handlers they handed off in
;;;; one batch per executor (SUBMIT-HANDOFFS), and release the replies held
;;;; for a handler's response (RELEASE-HELD).
;;;;
;;;; Budgets.  A turn processes at most +TURN-FRAMES+ frames and
;;;; +TURN-OCTETS+ octets of input; the rest stays in the connection's CARRY,
;;;; and the connection goes on the reactor's BACKLOG, which gets a turn per
;;;; loop before epoll is asked again (and is not read meanwhile).  A thread
;;;; writes at most +TURN-WRITE-OCTETS+ in one go (output.lisp).  So no
;;;; connection holds its reactor for more than a bounded amount of work,
;;;; however much it sends at once.
;;;;
;;;; Buffers.  All connections of a reactor read into the reactor's one
;;;; large buffer; a partial frame left at its end is copied into the
;;;; connection's CARRY, which exists only while such a fragment does.  An
;;;; idle connection therefore holds no read buffer, and its output buffers
;;;; are small until it sends (output.lisp).

(in-package #:clgrpc.http2)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defconstant +turn-frames+ 256
  "Frames one turn of a connection processes at most.")
(defconstant +turn-octets+ (* 256 1024)
  "Input octets one turn of a connection processes at most.")
(defconstant +hold-replies-us+ 1000
  "How long the replies of a turn that handed off a handler (a PING ACK, a
WINDOW_UPDATE) may wait for that handler's response to carry them.")
(defconstant +hold-max-octets+ 64
  "Output a turn may hold: a few ACKs and WINDOW_UPDATEs (a PING ACK is 17
octets), not responses.")

(defun %save-carry (conn buf pos fill)
  "Keep BUF[POS,FILL), a partial frame or frames left for want of budget,
for the next turn."
  (declare (type octets buf) (type fixnum pos fill))
  (let ((rest (- fill pos)))
    (if (zerop rest)
        (setf (conn-carry conn) nil (conn-carry-start conn) 0 (conn-carry-fill conn) 0)
        (let ((carry (conn-carry conn)))
          (unless (and carry (>= (length carry) rest))
            (setf carry (make-octets (max rest 1024))
                  (conn-carry conn) carry))
          (replace carry buf :start2 pos :end2 fill)
          (setf (conn-carry-start conn) 0
                (conn-carry-fill conn) rest)))))

(defun %reactor-buffer (reactor conn)
  "The reactor's read buffer, large enough for a partial frame of CONN and
a whole frame behind it."
  (let ((need (* 2 (+ 9 (conn-local-max-frame-size conn))))
        (buf (reactor-buffer reactor)))
    (if (>= (length buf) need)
        buf
        (setf (reactor-buffer reactor) (make-octets need)))))

(defun %begin-turn (conn)
  (setf (conn-turn-frames conn) +turn-frames+
        (conn-turn-octets conn) +turn-octets+))

(defun %process-read (conn buf fill)
  "Process the frames in BUF[0,FILL) (a carried rest, then what was just
read) within the turn's budget, and carry what is left to the next turn.
Returns true if whole frames are left for want of budget (INPUT-PENDING)."
  (declare (type octets buf) (type fixnum fill))
  (let ((pos 0))
    (declare (type fixnum pos))
    (when (and (eq (conn-role conn) :server)
               (< (conn-preface-seen conn) (length +connection-preface+)))
      (let ((start (%check-preface conn buf 0 fill)))
        (if start
            (setf pos start)
            (setf pos fill))))
    (multiple-value-bind (next over) (process-input conn buf pos fill)
      (%save-carry conn buf next fill)
      (setf (conn-input-pending conn) over))))

(defun %with-carry (reactor conn)
  "The reactor's buffer for CONN with its carried rest in front:
(values buffer fill)."
  (let ((buf (%reactor-buffer reactor conn))
        (start (conn-carry-start conn))
        (fill (conn-carry-fill conn)))
    (declare (type fixnum start fill))
    (when (> fill start)
      (replace buf (the octets (conn-carry conn)) :start2 start :end2 fill))
    (values buf (- fill start))))

(defun %carry-turn (conn)
  "Reactor: a turn over the whole frames CONN's carry holds, processed
where they are (an earlier turn ran out of budget): each turn moves past
what it processed, and the rest is copied only once it is a partial frame."
  (let ((carry (conn-carry conn))
        (start (conn-carry-start conn))
        (fill (conn-carry-fill conn)))
    (declare (type fixnum start fill))
    (when carry
      (multiple-value-bind (next over) (process-input conn carry start fill)
        (declare (type fixnum next))
        (when (eq carry (conn-carry conn))   ; not released meanwhile
          (cond ((= next fill)
                 (setf (conn-carry conn) nil (conn-carry-start conn) 0 (conn-carry-fill conn) 0))
                (over
                 (setf (conn-carry-start conn) next))
                (t
                 (replace carry carry :start2 next :end2 fill)
                 (setf (conn-carry-start conn) 0 (conn-carry-fill conn) (- fill next))))
          (setf (conn-input-pending conn) over))))))

(defun %read-plain (reactor conn)
  "Read once from CONN's socket and process it.  Returns true if input was
processed, NIL if there was none or the connection ended."
  (multiple-value-bind (buf fill) (%with-carry reactor conn)
    (declare (type octets buf) (type fixnum fill))
    (let ((n (clgrpc.net:fd-recv-some (conn-fd conn) buf fill (length buf))))
      (cond ((eq n :again) (return-from %read-plain nil))
            ((or (null n) (eql n 0))
             (finish-connection conn nil)
             (return-from %read-plain nil)))
      (setf (conn-last-read-us conn) (clgrpc.util:now-us))
      (%process-read conn buf (+ fill (the fixnum n)))
      t)))

(declaim (ftype function %read-tls %tls-backlog-turn))

(defun on-readable (reactor conn)
  (when (conn-linger-until conn)
    ;; Dropping input until the peer has read our GOAWAY.
    (let* ((buf (reactor-buffer reactor))
           (n (clgrpc.net:fd-recv-some (conn-fd conn) buf 0 (length buf))))
      (unless (eq n :again)
        (when (or (null n) (eql n 0))
          (finish-connection conn (conn-close-code conn)))))
    (return-from on-readable nil))
  (when (or (conn-input-pending conn) (conn-handshake-running conn))
    ;; Its turns come from the backlog (or the handshake's end) first; the
    ;; socket waits.
    (return-from on-readable nil))
  (%begin-turn conn)
  (when (if (conn-tls conn) (%read-tls reactor conn) (%read-plain reactor conn))
    (%end-turn reactor conn)))

(defun %backlog-turn (reactor conn)
  "Reactor: a turn over the input CONN had left when its last turn ran out
of budget."
  (when (and (conn-input-pending conn) (conn-registered conn) (not (conn-linger-until conn)))
    (%begin-turn conn)
    (if (conn-tls conn)
        (%tls-backlog-turn reactor conn)
        (%carry-turn conn))
    (%end-turn reactor conn)))

(defun %submit-handoff (conn tasks)
  "Reactor: TASKS (function argument ...), in order, for CONN's executor:
they go with those of every other connection this loop of the reactor
served, in one batch per executor (SUBMIT-HANDOFFS)."
  (let ((reactor (conn-reactor conn)))
    (push (cons conn tasks) (reactor-handoffs reactor))))

(defun submit-handoffs (reactor)
  "Reactor, before it waits in epoll again: the work its turns handed off
since it last waited, to the executors, one batch each (in the order it
came), and so at most one wake-up each.  An executor that is shut down
(its server is stopping) takes nothing: the connections close, and their
calls fail."
  (let ((handoffs (nreverse (shiftf (reactor-handoffs reactor) '()))))
    (loop while handoffs
          do (let* ((executor (conn-executor (car (first handoffs))))
                    (mine (remove executor handoffs :key (lambda (h) (conn-executor (car h)))
                                                    :test-not #'eq))
                    (tasks (loop for (nil . tasks) in mine append tasks)))
               (setf handoffs (delete executor handoffs :key (lambda (h) (conn-executor (car h)))))
               (unless (and executor
                            (clgrpc.util:executor-submit-batch executor (reactor-index reactor) tasks))
                 (dolist (h mine)
                   (%abandon-handoff (car h) (cdr h))))))))

(defun %abandon-handoff (conn tasks)
  "Reactor: CONN's executor refused TASKS (function argument ...), as it
is shut down.  The application hears of each (ON-ABANDON), so that what it
claimed for them (handler slots, which count against the process's calls)
goes back, and the connection closes."
  (unwind-protect
       (with-connection-lock (conn)
         (let ((abandon (conn-on-abandon conn)))
           (when abandon
             (loop for (function argument) on tasks by #'cddr
                   do (handler-case (funcall (the function abandon) conn function argument)
                        (error (e)
                          (clgrpc.util:log-line "abandoning work on fd ~D failed: ~A"
                                                (conn-fd conn) e)))))))
    (connection-close conn :code +refused-stream+)))

(defun run-deferred (conn)
  "Reactor thread serving CONN, lock released: hand the turn's handed-off
work to the executor in one batch, then run the work deferred to this
thread, each in the order it came (and again for what that work handed
off or deferred in turn).  Returns :HANDED-OFF if the turn handed off work
that will answer at once (HAND-OFF's RESPONDS) and ran none here."
  (let ((ran nil))
    (loop while (or (conn-handoff conn) (conn-deferred conn))
          do (let ((handoff (shiftf (conn-handoff conn) '())))
               (when handoff
                 (%submit-handoff conn (nreverse handoff))))
             (let ((tasks (nreverse (shiftf (conn-deferred conn) '()))))
               (when tasks
                 (setf ran t))
               (loop for (argument function) on tasks by #'cddr
                     do (funcall (the function function) argument))))
    (and (shiftf (conn-handoff-responds conn) nil) (not ran) :handed-off)))

(defun %replies-only-p (conn)
  "Whether all CONN has to write is a few replies: no parked response (a
WINDOW_UPDATE asks for a flush to resume those), nothing large."
  (with-connection-lock (conn)
    (and (conn-reader-flush conn)
         (not (conn-write-blocked conn))
         (null (conn-parked conn))
         (<= (%buffered conn) +hold-max-octets+))))

(defun %hold-replies (reactor conn)
  "Reactor: the turn's replies wait, up to +HOLD-REPLIES-US+, for the
response of the handler the turn handed off, whose flush writes them with
it: one send(2) a call, as when handlers ran here, where a PING ACK written
now would cost a second one.  RELEASE-HELD writes them if it has not."
  (setf (conn-reader-flush conn) nil)
  (unless (conn-replies-held-until conn)
    (setf (conn-replies-held-until conn) (+ (clgrpc.util:now-us) +hold-replies-us+))
    (clgrpc.util:fifo-push (reactor-held reactor) conn)))

(defun release-held (reactor)
  "Reactor: write the held replies that have waited their time, oldest
first.  Returns how many microseconds the next one has left, or NIL if
none is held."
  (let ((held (reactor-held reactor))
        (now (clgrpc.util:now-us)))
    (loop
      (when (clgrpc.util:fifo-empty-p held)
        (return nil))
      (let* ((conn (clgrpc.util:fifo-peek held))
             (left (- (the fixnum (conn-replies-held-until conn)) now)))
        (declare (type fixnum left))
        (when (plusp left)
          (return left))
        (clgrpc.util:fifo-pop held)
        (setf (conn-replies-held-until conn) nil)
        (serving (conn)
          (with-connection-guard (conn)
            (%write-out conn nil)
            (%after-write conn)))))))

(defun %end-turn (reactor conn)
  "Reactor: what follows the frames of a turn: the work they produced, the
replies, and the checks that depend on them."
  (when (conn-input-pending conn)
    (push conn (reactor-backlog reactor)))
  ;; Replies to what was just read, and responses of the work above,
  ;; leave before the next connection is served; unless all the work went
  ;; to handlers elsewhere, whose responses will carry them.
  (if (and (eq (run-deferred conn) :handed-off) (%replies-only-p conn))
      (%hold-replies reactor conn)
      (%write-replies conn))
  ;; A peer that asks for more than it reads stops being read.  Only a
  ;; write-blocked connection can be paused: the lock is taken for those
  ;; alone (a stale read of the flag is caught at the next read).
  (when (conn-write-blocked conn)
    (with-connection-lock (conn)
      (%check-read-pause conn)))
  ;; 6.8: after the peer's GOAWAY, the connection ends with its last stream.
  (when (and (conn-goaway-received conn)
             (zerop (hash-table-count (conn-streams conn))))
    (drain-and-close conn)))

(defun %write-replies (conn)
  "Reactor thread serving CONN: write what its frames and deferred work queued."
  (loop repeat 4 while (conn-reader-flush conn) do (%reader-flush conn)))

(defun %after-write (conn)
  "Reactor, after writing CONN's output: a lingering connection whose
output is all written closes (a graceful close) or half-closes."
  (when (and (conn-linger-until conn) (not (conn-finished conn))
             (not (with-connection-lock (conn) (%output-pending-p conn))))
    (if (or (conn-closed conn) (null (conn-close-code conn))
            (eql (conn-close-code conn) +no-error+))
        ;; A graceful close: everything is written.
        (finish-connection conn (conn-close-code conn))
        (clgrpc.net:fd-shutdown (conn-fd conn) :output))))

(defun on-writable (conn)
  (%write-out conn t)
  (%after-write conn))
