;;;; Where handlers run, and what a handler or a peer can hold up: handlers
;;;; on the executor by default and inline only when declared, short and long
;;;; blocking handlers beside cheap calls, the reactor's budget per turn, a
;;;; log that cannot block a reactor, and senders that give up on a peer that
;;;; takes nothing.

(in-package #:clgrpc.tests)

(def-suite :clgrpc.execution :in :clgrpc)
(in-suite :clgrpc.execution)

(defvar *in-flight* (list 0) "In its car: Overlap handlers running (atomic).")
(defvar *most-in-flight* 0 "The most Overlap handlers seen running at once.")
(defvar *turn-counter* (list 0) "In its car: Tick handlers run (atomic).")
(defvar *long-poll-gate* (sb-thread:make-semaphore) "What LongPoll calls wait for.")
(defvar *held* (list 0) "In its car: Hold handlers started (atomic).")

(define-condition test-interrupt (serious-condition) ()
  (:documentation "A serious condition that is not an error: nothing in a
handler's way catches it."))

(defun register-execution-methods (server inline)
  (flet ((reg (name fn &optional (kind :unary))
           (clgrpc.grpc:register-method server (concatenate 'string "/test.Svc/" name) fn
                                        :kind kind :inline (member name inline :test #'string=))))
    (reg "Overlap"                      ; waits 2 ms, noting how many run at once
         (lambda (req call)
           (declare (ignore call))
           (let ((n (sb-ext:atomic-incf (car *in-flight*))))
             (setf *most-in-flight* (max *most-in-flight* (1+ n))))
           (sleep 0.002)
           (sb-ext:atomic-decf (car *in-flight*))
           req))
    (reg "LongPoll"                     ; (1) once *LONG-POLL-GATE* is signalled, (0) after 20 s
         (lambda (req call)
           (declare (ignore req call))
           (bytes (if (sb-thread:wait-on-semaphore *long-poll-gate* :timeout 20) 1 0))))
    (reg "Tick"                         ; computes 300 us, counting the calls run
         (lambda (req call)
           (declare (ignore call))
           (let ((until (+ (clgrpc.util:now-us) 300)))
             (loop while (< (clgrpc.util:now-us) until)))
           (sb-ext:atomic-incf (car *turn-counter*))
           req))
    (reg "Pause"                        ; waits 30 ms, then as Where
         (lambda (req call)
           (declare (ignore req))
           (sleep 0.03)
           (where-octets call)))
    (reg "BigObserved"                  ; as Big, noting when the handler ends
         (lambda (req call)
           (unwind-protect
                (dotimes (i (aref req 0)) (clgrpc.grpc:call-send call (filled 100000 i)))
             (observe (list :big-ended))))
         :server-streaming)
    (reg "Hold"                         ; notes that it started, then reads until the client ends
         (lambda (call)
           (sb-ext:atomic-incf (car *held*))
           (loop while (clgrpc.grpc:call-recv call)))
         :bidi)
    (reg "Interrupt"                    ; signals a condition no handler-case of the server takes
         (lambda (req call)
           (declare (ignore req call))
           (error 'test-interrupt)))))

(defmacro with-execution-server ((port &key inline server-args) &body body)
  (let ((server (gensym "SERVER")))
    `(let* ((,server (clgrpc.grpc:make-server ,@server-args))
            (,port (progn (register-test-methods ,server ,inline)
                          (register-execution-methods ,server ,inline)
                          (clgrpc.grpc:server-start ,server))))
       (unwind-protect (progn ,@body)
         (clgrpc.grpc:server-stop ,server :grace 1)))))

(defun data-frames-payload (frame)
  "The message of a response DATA frame."
  (subseq (clgrpc.http2:frame-data frame) (+ 5 (clgrpc.http2:frame-data-start frame))
          (clgrpc.http2:frame-data-end frame)))

(defun send-requests (peer method ids request)
  "Each request of IDS to METHOD, all in one write."
  (let ((b (make-obuf 4096)))
    (dolist (id ids)
      (clgrpc.http2:write-headers-frame
       b id (raw-header-block peer (grpc-request-headers (concatenate 'string "/test.Svc/" method))))
      (clgrpc.http2:write-data-frame b id (grpc-frame request) :end-stream t))
    (raw-send peer (obuf-contents b))))

(defun stream-ids (n)
  (loop for id from 1 by 2 repeat n collect id))

;;; ------------------------------------------------------------------
;;; Where handlers run

(test handlers-run-on-the-executor-unless-declared-inline
  (with-execution-server (port :inline '("Where" "StreamWhere"))
    (let ((ch (clgrpc.grpc:make-channel "127.0.0.1" port)))
      (unwind-protect
           (progn
             (is (equal "reactor" (where ch "Where")))
             (is (equalp (bytes 1 2) (unary ch "Echo" (bytes 1 2)))))
        (clgrpc.grpc:channel-close ch)))
    ;; A client stream of an inline method runs on the reactor when every
    ;; message came with its headers; one still open goes to the executor,
    ;; where it may wait for the peer.
    (let ((peer (raw-connect-port port)))
      (unwind-protect
           (progn
             (is (equal "reactor" (raw-client-stream-where peer 1 t)))
             (is (equal "grpc handler" (raw-client-stream-where peer 3 nil))))
        (raw-close peer))))
  (with-grpc (ch)
    (is (equal "grpc handler" (where ch "Where")))))

(test slow-inline-method-is-demoted
  ;; A method declared inline that blocks runs on the executor for good
  ;; after one call over +INLINE-STALL-US+, and the log says so once.
  (with-execution-server (port :inline '("Pause"))
    (let ((ch (clgrpc.grpc:make-channel "127.0.0.1" port))
          (stderr *error-output*)
          (log (make-string-output-stream)))
      (unwind-protect
           (progn
             (clgrpc.util:log-drain)
             (setf (symbol-value '*error-output*) log)
             (is (equal "reactor" (where ch "Pause")))
             (is (equal "grpc handler" (where ch "Pause")))
             (is (equal "grpc handler" (where ch "Pause")))
             (clgrpc.util:log-drain)
             (sleep 0.05)
             (let ((text (get-output-stream-string log)))
               (is (= 1 (count #\Newline text)) "log: ~S" text)
               (is (search "/test.Svc/Pause is registered inline" text) "log: ~S" text)))
        (setf (symbol-value '*error-output*) stderr)
        (clgrpc.grpc:channel-close ch)))))

;;; ------------------------------------------------------------------
;;; What a handler can hold up

(test short-blocking-handlers-on-one-connection-run-side-by-side
  ;; Sixteen calls on one connection to a handler that waits 2 ms: they run
  ;; at the same time, not one after another on the connection's reactor.
  (setf (car *in-flight*) 0 *most-in-flight* 0)
  (with-execution-server (port)
    (let ((peer (raw-connect-port port)))
      (unwind-protect
           (progn
             (send-requests peer "Overlap" (stream-ids 16) (bytes 1))
             (is (= 16 (loop repeat 16
                             count (not (symbolp (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+)
                                                             10))))))
             (is (>= *most-in-flight* 4) "at most ~D of 16 ran at once" *most-in-flight*))
        (raw-close peer)))))

(test cheap-calls-are-answered-beside-long-polls
  ;; Forty calls wait for a gate (long polls), twenty arriving one by one,
  ;; then twenty at once; cheap calls on the same connection, and on
  ;; another, are answered meanwhile, within their deadlines.
  (with-execution-server (port)
    (let* ((ch (clgrpc.grpc:make-channel "127.0.0.1" port))
           (other (clgrpc.grpc:make-channel "127.0.0.1" port))
           (polls (loop for i below 40
                        collect (sb-thread:make-thread
                                 (lambda ()
                                   (handler-case (unary ch "LongPoll" (bytes) :timeout 30)
                                     (clgrpc.grpc:grpc-error (e) e))))
                        do (when (< i 20) (sleep 0.02)))))
      (unwind-protect
           (progn
             (sleep 0.5)
             (is (every (lambda (i) (equalp (bytes i) (unary ch "Echo" (bytes i) :timeout 2)))
                        '(1 2 3 4 5 6 7 8)))
             (is (every (lambda (i) (equalp (bytes i) (unary other "Echo" (bytes i) :timeout 2)))
                        '(1 2 3 4 5 6 7 8))))
        (sb-thread:signal-semaphore *long-poll-gate* 40)
        (is (every (lambda (thread) (equalp (bytes 1) (sb-thread:join-thread thread :timeout 30)))
                   polls))
        (clgrpc.grpc:channel-close ch)
        (clgrpc.grpc:channel-close other)))))

(test a-quiet-server-starts-a-batch-of-blocking-handlers
  ;; A server idle long enough for its executor's monitor to sleep gets, in
  ;; one write, more streams whose handlers block at once than it has
  ;; workers: every handler starts, though no other call comes to wake
  ;; anything.
  (setf (car *held*) 0)
  (with-execution-server (port)
    (let ((peer (raw-connect-port port))
          (streams (* 4 (clgrpc.util:usable-cpu-count))))
      (unwind-protect
           (progn
             (raw-grpc-request peer 1 "/test.Svc/Echo" (bytes 1))
             (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+ 1) 5)
             (sleep 0.5)
             (let ((b (make-obuf 4096)))
               (loop for id from 3 by 2 repeat streams
                     do (clgrpc.http2:write-headers-frame
                         b id (raw-header-block peer (grpc-request-headers "/test.Svc/Hold"))))
               (raw-send peer (obuf-contents b)))
             (is (loop repeat 300
                       thereis (= streams (car *held*))
                       do (sleep 0.01))
                 "~D of ~D handlers started" (car *held*) streams))
        (raw-close peer)))))

(test a-turn-has-a-budget
  ;; 400 requests in one write to an inline method of 300 us each: the
  ;; reactor writes the first responses after a turn's worth of them, not
  ;; after all 400 have run.
  (setf (car *turn-counter*) 0)
  (with-execution-server (port :inline '("Tick"))
    (let ((peer (raw-connect-port port)))
      (unwind-protect
           (progn
             (send-requests peer "Tick" (stream-ids 400) (bytes 1))
             (let ((first (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+) 20))
                   (ran (car *turn-counter*)))
               (is (not (symbolp first)))
               (is (< ran 400) "all ~D handlers ran before the first response was written" ran))
             (is (= 399 (loop repeat 399
                              count (not (symbolp (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+)
                                                              20)))))))
        (raw-close peer)))))

(defun send-ping-and-request (peer id method)
  "A PING and a request to METHOD on stream ID, in one write."
  (let ((b (make-obuf 256)))
    (clgrpc.http2:write-ping-frame b 7)
    (clgrpc.http2:write-headers-frame
     b id (raw-header-block peer (grpc-request-headers (concatenate 'string "/test.Svc/" method))))
    (clgrpc.http2:write-data-frame b id (grpc-frame (bytes 1)) :end-stream t)
    (raw-send peer (obuf-contents b))))

(defun ping-ack-p (frame)
  (and (= (clgrpc.http2:frame-type frame) clgrpc.http2:+frame-ping+)
       (clgrpc.http2:frame-ack-p frame)))

(test replies-wait-for-a-handler-only-a-moment
  ;; A PING in the same write as a request whose handler waits until the
  ;; test lets it answer: the reactor holds the ACK for the handler's
  ;; response to carry, but only for a moment, so the ACK arrives while
  ;; the handler still waits.  No bound on how long it took: on a loaded
  ;; machine the hold's release can be late, never as late as never.
  ;; A gate of its own: a count another test left would answer at once.
  (setf *long-poll-gate* (sb-thread:make-semaphore))
  (with-execution-server (port)
    (let ((peer (raw-connect-port port)))
      (unwind-protect
           (progn
             (send-ping-and-request peer 1 "LongPoll")
             (let ((first (raw-expect peer (lambda (f)
                                             (or (ping-ack-p f)
                                                 (= (clgrpc.http2:frame-type f)
                                                    clgrpc.http2:+frame-data+)))
                                      5)))
               (is (not (symbolp first)) "no PING ACK while the handler waited: ~S" first)
               (is (and (not (symbolp first)) (ping-ack-p first))))
             (sb-thread:signal-semaphore *long-poll-gate*)
             (let ((data (raw-expect peer (frame-of-type clgrpc.http2:+frame-data+ 1) 5)))
               (is (not (symbolp data)))
               (is (and (not (symbolp data)) (equalp (bytes 1) (data-frames-payload data))))))
        (raw-close peer)))))

(test replies-leave-with-the-handlers-response
  ;; A PING in the same write as a request whose handler answers at once:
  ;; its ACK leaves with the response (already read when the ACK is), at
  ;; least in some of twenty tries (a busy machine may let the hold end
  ;; before the worker runs).
  (with-execution-server (port)
    (let ((peer (raw-connect-port port)))
      (unwind-protect
           (is (loop for id from 1 by 2 repeat 20
                     count (progn
                             (send-ping-and-request peer id "Echo")
                             (let ((ack (raw-expect peer #'ping-ack-p 5)))
                               (prog1 (and (not (symbolp ack)) (plusp (raw-peer-fill peer)))
                                 (raw-expect peer (frame-of-type clgrpc.http2:+frame-headers+ id) 5)))))
               "the ACK never came with the response")
        (raw-close peer)))))

;;; A stream whose writes block until released: standard error that nobody
;;; reads.
(defclass blocking-output (sb-gray:fundamental-character-output-stream)
  ((gate :initform (sb-thread:make-semaphore) :reader blocking-output-gate)
   (writes :initform (list 0) :reader blocking-output-writes)))

(defmethod sb-gray:stream-write-char ((stream blocking-output) char)
  (declare (ignore char))
  (sb-ext:atomic-incf (car (blocking-output-writes stream)))
  (sb-thread:wait-on-semaphore (blocking-output-gate stream) :timeout 30)
  (sb-thread:signal-semaphore (blocking-output-gate stream)))

(defmethod sb-gray:stream-line-column ((stream blocking-output)) nil)

(defun channel-on-reactor (port index)
  "A channel to PORT whose server side is served by reactor INDEX (channels
open until one is), and the channels opened on the way, to close.
Reactors are taken in turn by client and server connections alike, so a
channel's two sides can land on the same reactors every time: a bare
connection to the server in between shifts the turn."
  (let ((opened '()))
    (loop repeat 20
          do (let ((ch (clgrpc.grpc:make-channel "127.0.0.1" port)))
               (push ch opened)
               (when (eql index (aref (unary ch "ReactorIndex" (bytes) :timeout 5) 0))
                 (return-from channel-on-reactor (values ch (remove ch opened))))
               (raw-close (raw-connect port))))
    (values nil opened)))

(test a-reactor-never-waits-on-the-log
  ;; Standard error blocks; a connection fails in a way the reactor logs;
  ;; another connection on the same reactor is still answered.
  (with-execution-server (port :inline '("Interrupt"))
    (let* ((failing (clgrpc.grpc:make-channel "127.0.0.1" port))
           (index (aref (unary failing "ReactorIndex" (bytes) :timeout 5) 0))
           (stderr *error-output*)
           (blocked (make-instance 'blocking-output)))
      (multiple-value-bind (other spare) (channel-on-reactor port index)
        (unwind-protect
             (progn
               (is (not (null other)))
               (setf (symbol-value '*error-output*) blocked)
               (status-of (lambda () (unary failing "Interrupt" (bytes) :timeout 2)))
               (is (equalp (bytes 9) (unary other "Echo" (bytes 9) :timeout 2)))
               ;; The line did go to the blocked stream.
               (is (loop repeat 200
                         thereis (plusp (car (blocking-output-writes blocked)))
                         do (sleep 0.01))))
          (setf (symbol-value '*error-output*) stderr)
          (sb-thread:signal-semaphore (blocking-output-gate blocked))
          (mapc #'clgrpc.grpc:channel-close (list* failing (append (and other (list other)) spare))))))))

(test a-sender-gives-up-on-a-peer-that-takes-nothing
  ;; A streaming handler sends to a client that opens no window and reads
  ;; nothing: its send fails after the stall timeout, the handler ends,
  ;; and the stream is reset.
  (with-execution-server (port :server-args (:send-stall-timeout 1))
    (let ((peer (raw-connect port)))
      (raw-preface peer `((,clgrpc.http2:+settings-initial-window-size+ . 0)))
      (unwind-protect
           (progn
             (setf *observed* nil)
             (raw-grpc-request peer 1 "/test.Svc/BigObserved" (bytes 3))
             (is (not (symbolp (raw-expect peer (frame-of-type clgrpc.http2:+frame-rst-stream+ 1) 10))))
             (is (wait-observed (lambda (x) (and (consp x) (eq (first x) :big-ended))) 5)))
        (raw-close peer)))))

(defun within-five-seconds (condition)
  "True once (CONDITION) is, called every 10 ms for up to five seconds."
  (loop repeat 500 thereis (funcall condition) do (sleep 0.01)))

(defun %all-parked-p (executor)
  (= (length (clgrpc.util::executor-parked executor)) (clgrpc.util::executor-threads executor)))

(defun call-after-a-burst (function &rest executor-args)
  "Grow an executor (EXECUTOR-ARGS, at least one worker kept) for forty
tasks that block, check that it grew to twenty workers, let the tasks
end, and call FUNCTION with the executor, shut down after."
  (let ((executor (apply #'clgrpc.util:make-executor :min-threads 1 :keep-idle 2 executor-args))
        (gate (sb-thread:make-semaphore)))
    (unwind-protect
         (progn
           (dotimes (i 40)
             (clgrpc.util:executor-submit executor 0 (lambda (g) (sb-thread:wait-on-semaphore g :timeout 5)) gate))
           (is (within-five-seconds (lambda () (>= (clgrpc.util::executor-threads executor) 20)))
               "the pool grew to ~D threads" (clgrpc.util::executor-threads executor))
           (sb-thread:signal-semaphore gate 40)
           (funcall function executor))
      (clgrpc.util:shutdown-executor executor))))

(test surplus-workers-retire-while-collections-interrupt-their-waits
  ;; A burst of blocking tasks grows the pool; once it is over, workers
  ;; beyond the kept idle ones retire after SURPLUS-IDLE, even though garbage
  ;; collections, which interrupt every thread's wait, come more often.
  (call-after-a-burst
   (lambda (executor)
     (is (loop repeat 40
               thereis (<= (clgrpc.util::executor-threads executor) 4)
               do (sleep 0.1) (sb-ext:gc))
         "~D workers still alive 4 s after the burst"
         (clgrpc.util::executor-threads executor)))
   :name "retire test" :surplus-idle 1))

(test under-a-trickle-the-surplus-of-a-burst-retires
  ;; After a burst, a steady trickle of quick tasks goes to the worker
  ;; parked last, again and again: the rest of the pool stays parked and
  ;; retires after SURPLUS-IDLE, instead of each being woken in turn and
  ;; kept alive by the trickle.
  (call-after-a-burst
   (lambda (executor)
     (loop repeat 600
           do (clgrpc.util:executor-submit executor 0 (lambda (x) x) nil)
              (sleep 0.005))
     (is (<= (clgrpc.util::executor-threads executor) 6)
         "~D workers still alive under a trickle, 3 s after the burst"
         (clgrpc.util::executor-threads executor)))
   :name "trickle test" :surplus-idle 1))

(test a-pool-sized-for-a-burst-outlives-a-pause
  ;; At the defaults, the workers a burst of blocking calls needed are still
  ;; there two seconds after it, collections and all: the next burst finds
  ;; them instead of starting each again while its calls wait.
  (call-after-a-burst
   (lambda (executor)
     (loop repeat 20 do (sleep 0.1) (sb-ext:gc))
     (is (>= (clgrpc.util::executor-threads executor) 20)
         "~D workers left 2 s after the burst" (clgrpc.util::executor-threads executor)))
   :name "pause test"))

(declaim (notinline %octets-in %octets-deep))
(defun %octets-in (octets) (length octets))
(defun %octets-deep (depth octets)
  "OCTETS' length, found DEPTH frames down: a task whose frames hold OCTETS."
  (if (zerop depth)
      (%octets-in octets)
      (max (%octets-deep (1- depth) octets) (%octets-in octets))))

(test a-parked-worker-keeps-nothing-of-its-last-task
  ;; Collections scan a stopped thread's stack conservatively: a worker
  ;; parked after a large call must not keep its response alive from the
  ;; stack its task used, nor from its own frames, which held the task's
  ;; argument.  Each of sixteen tasks makes a MiB and hands it, as the
  ;; argument, to a task of its own that holds it deep in its frames.
  (let ((executor (clgrpc.util:make-executor :name "stack test" :min-threads 1))
        (lock (sb-thread:make-mutex))
        (made '())
        (held (list 0)))
    (flet ((hold (argument)
             (%octets-deep 50 (first argument))
             (sleep 0.01)
             (sb-ext:atomic-incf (car held))
             nil))
      (unwind-protect
           (progn
             (clgrpc.util:executor-submit-batch
              executor 0
              (loop repeat 16
                    collect (lambda (ignore)
                              (declare (ignore ignore))
                              (let ((octets (make-array (* 1024 1024) :element-type '(unsigned-byte 8))))
                                (sb-thread:with-mutex (lock)
                                  (push (sb-ext:make-weak-pointer octets) made))
                                (clgrpc.util:executor-submit executor 0 #'hold (list octets))
                                nil))
                    collect nil))
             (is (within-five-seconds (lambda () (and (= 16 (car held)) (%all-parked-p executor)))))
             (sb-ext:gc :full t)
             (is (= 0 (count-if #'sb-ext:weak-pointer-value made))
                 "~D of 16 responses of a MiB kept by parked workers"
                 (count-if #'sb-ext:weak-pointer-value made)))
        (clgrpc.util:shutdown-executor executor)))))

;; The same while the heap is full: with two turns, one held by a task
;; that waits, a task makes a MiB and queues a second task that waits.  Its
;; worker then waits for a turn, or takes the second task while another
;; worker waits; either way it must not keep the MiB from the stack its
;; task used.
(test a-worker-waiting-for-a-turn-keeps-nothing-of-its-last-task
  (let ((executor (clgrpc.util:make-executor :name "turn stack test" :min-threads 3
                                             :turns 2 :turn-lapse 60))
        (gate (sb-thread:make-semaphore))
        (started (list 0))
        (made nil))
    (flet ((hold (gate)
             (sb-ext:atomic-incf (car started))
             (sb-thread:wait-on-semaphore gate :timeout 10)))
      (unwind-protect
           (progn
             ;; Three workers, parked, before the heap counts as full.
             (dotimes (i 3)
               (clgrpc.util:executor-submit executor 0 #'hold gate))
             (is (within-five-seconds (lambda () (= 3 (car started)))))
             (sb-thread:signal-semaphore gate 3)
             (is (within-five-seconds (lambda () (%all-parked-p executor))))
             (setf (car started) 0
                   (clgrpc.util::executor-turn-heap-limit executor) 0)
             (clgrpc.util:executor-submit executor 0 #'hold gate)
             (is (within-five-seconds (lambda () (= 1 (car started)))))
             (clgrpc.util:executor-submit
              executor 0
              (lambda (ignore)
                (declare (ignore ignore))
                (let ((octets (make-array (* 1024 1024) :element-type '(unsigned-byte 8))))
                  (setf made (sb-ext:make-weak-pointer octets))
                  (%octets-deep 50 octets)
                  (clgrpc.util:executor-submit executor 0 #'hold gate)
                  nil))
              nil)
             (is (within-five-seconds (lambda () (= 2 (car started)))))
             (sleep 0.1)
             (sb-ext:gc :full t)
             (is (and made (null (sb-ext:weak-pointer-value made)))
                 "a worker waiting for a turn keeps its last task's MiB"))
        (sb-thread:signal-semaphore gate 2)
        (clgrpc.util:shutdown-executor executor)))))

;; Workers woken for a batch take its tasks, no more are woken than there
;; are tasks, and once they have run and parked again, none counts as woken
;; and every parked one as idle: counts left raised would keep later tasks
;; from waking anyone.
(test wake-up-counts-return-to-rest-after-a-batch
  (call-after-a-burst
   (lambda (executor)
     (flet ((parked () (length (clgrpc.util::executor-parked executor))))
       (is (within-five-seconds
             (lambda ()
               (and (%all-parked-p executor) (not (clgrpc.util::executor-monitor-awake executor)))))
           "~D of ~D workers parked after the burst"
           (parked) (clgrpc.util::executor-threads executor))
       (let* ((before (parked))
              (gate (sb-thread:make-semaphore))
              (started (list 0)))
         (clgrpc.util:executor-submit-batch
          executor 0
          (loop repeat 4
                collect (lambda (g)
                          (sb-ext:atomic-incf (car started))
                          (sb-thread:wait-on-semaphore g :timeout 5))
                collect gate))
         (is (within-five-seconds (lambda () (= (car started) 4)))
             "~D tasks started" (car started))
         (is (= (- before 4) (parked)) "~D of ~D workers still parked" (parked) before)
         (sb-thread:signal-semaphore gate 4)
         (is (within-five-seconds (lambda () (= before (parked)))))
         (is (= 0 (clgrpc.util::executor-waking executor)))
         (is (= (parked) (clgrpc.util::executor-idle executor))))))
   ;; No worker retires while the counts are compared, on a slow machine too.
   :name "wake count test" :surplus-idle 60))

(defun %workers-wanted-while-blocked (heap-limit cpus)
  "How many workers the monitor of an executor of eight workers, all blocked
with tasks waiting, would start on two ticks in a row that saw its CPUs as
CPUS (:IDLE or :BUSY), with HEAP-LIMIT: the pool may not grow while it is
sampled (its limit is raised only under the lock the monitor decides
under)."
  (let ((executor (clgrpc.util:make-executor :name "crowded test" :min-threads 8 :max-threads 8
                                             :heap-limit heap-limit))
        (gate (sb-thread:make-semaphore)))
    (unwind-protect
         (progn
           (dotimes (i 20)
             (clgrpc.util:executor-submit
              executor 0 (lambda (g) (sb-thread:wait-on-semaphore g :timeout 5)) gate))
           ;; Every worker asleep, and the oldest task waiting past 10 ms.
           (sleep 0.1)
           (sb-thread:with-mutex ((clgrpc.util::executor-park-lock executor))
             (setf (clgrpc.util::executor-max-threads executor) 100)
             (unwind-protect
                  ;; Two ticks in a row.
                  (loop repeat 2
                        collect (clgrpc.util::%workers-wanted executor cpus (clgrpc.util:now-us)))
               (setf (clgrpc.util::executor-max-threads executor) 8))))
      (sb-thread:signal-semaphore gate 20)
      (clgrpc.util:shutdown-executor executor))))

(test the-pool-grows-slowly-while-the-heap-is-crowded
  ;; Every handler holds what it builds until it ends: past the executor's
  ;; heap limit (here, any heap at all), blocked workers make the pool grow
  ;; by one worker a tick, not by half, while the CPUs idle, and by one
  ;; every 100 ms while they are busy (never not at all, or long-blocked
  ;; workers would hold the queue for ever).
  (is (equal '(4 4) (%workers-wanted-while-blocked most-positive-fixnum :idle)))
  (is (equal '(1 1) (%workers-wanted-while-blocked 0 :idle)))
  (is (equal '(0 1) (%workers-wanted-while-blocked most-positive-fixnum :busy)))
  (is (equal '(1 0) (%workers-wanted-while-blocked 0 :busy))))

;;; Turns while the heap is full.

(defun %tasks-run-at-once (turn-heap-limit n seconds turn-lapse &key compute)
  "N tasks of SECONDS each on an executor of N workers with TURN-HEAP-LIMIT,
two turns and TURN-LAPSE: how many ran at once at most, when each started
(µs after the first was submitted, in order), and how many workers the
executor had at the end.  The tasks sleep, or with COMPUTE, keep a CPU busy."
  (let* ((executor (clgrpc.util:make-executor :name "turns test" :min-threads n :max-threads (* 2 n)
                                              :turn-heap-limit turn-heap-limit :turns 2
                                              :turn-lapse turn-lapse))
         (lock (sb-thread:make-mutex))
         (done (sb-thread:make-semaphore))
         (running 0) (most 0) (starts '())
         (t0 (clgrpc.util:now-us)))
    (unwind-protect
         (progn
           (dotimes (i n)
             (clgrpc.util:executor-submit
              executor 0
              (lambda (arg)
                (declare (ignore arg))
                (sb-thread:with-mutex (lock)
                  (setf most (max most (incf running)))
                  (push (- (clgrpc.util:now-us) t0) starts))
                (if compute
                    (loop with end = (+ (clgrpc.util:now-us) (round (* seconds 1000000)))
                          while (< (clgrpc.util:now-us) end))
                    (sleep seconds))
                (sb-thread:with-mutex (lock) (decf running))
                (sb-thread:signal-semaphore done))
              nil))
           (dotimes (i n)
             (sb-thread:wait-on-semaphore done :timeout 20))
           (values most (sort starts #'<) (clgrpc.util::executor-threads executor)))
      (clgrpc.util:shutdown-executor executor))))

(test tasks-take-turns-while-the-heap-is-full
  ;; Handlers allocate what they build, and a collection runs only once
  ;; every thread has stopped for it: past the turn limit (here, any heap
  ;; at all), only two tasks run at once, however many workers there are,
  ;; and the pool does not grow for the tasks that wait.
  (is (= 4 (%tasks-run-at-once most-positive-fixnum 4 0.1 10)))
  (multiple-value-bind (most starts threads) (%tasks-run-at-once 0 6 0.1 10)
    (is (= 2 most))
    (is (= 6 (length starts)))
    (is (= 6 threads) "the pool grew to ~D workers" threads))
  ;; A turn stops counting after its lapse: tasks that wait (here, sleep)
  ;; hold the others back no longer than that.
  (multiple-value-bind (most starts) (%tasks-run-at-once 0 4 0.6 0.1)
    (is (= 4 most))
    (is (< (car (last starts)) 450000) "the last task started after ~D µs" (car (last starts))))
  ;; One that computes keeps its turn however long it takes: on CPUs
  ;; shared with other processes a handler building its response can take
  ;; many lapses, and another starting beside it would allocate too.
  (multiple-value-bind (most starts) (%tasks-run-at-once 0 4 0.4 0.1 :compute t)
    (is (= 2 most) "~D computing tasks ran at once" most)
    (is (= 4 (length starts)))))

(defun %call-with-lapsed-worker (body check)
  "Run BODY on a new thread, and call CHECK with a worker of that thread
whose turn began a second ago and the time then: CHECK's value."
  (let* ((fd (list nil))
         (ready (sb-thread:make-semaphore))
         (thread (sb-thread:make-thread
                  (lambda ()
                    (setf (car fd) (clgrpc.util::%open-stat))
                    (sb-thread:signal-semaphore ready)
                    (funcall body)))))
    (sb-thread:wait-on-semaphore ready)
    (sleep 0.05)
    (let ((worker (clgrpc.util::make-worker (car fd)))
          (t0 (clgrpc.util:now-us)))
      (setf (clgrpc.util::worker-turn-us worker) (- t0 1000000))
      (unwind-protect (funcall check worker t0)
        (sb-thread:join-thread thread :default nil)
        (sb-unix:unix-close (car fd))))))

(defun %lapsed-turn-held-by (body)
  "Whether a worker whose turn lapsed long ago still holds it, as seen at
+0, +5, +20 and +40 ms, while its thread runs BODY."
  (%call-with-lapsed-worker
   body
   (lambda (worker t0)
     (loop for ms in '(0 5 20 40)
           collect (clgrpc.util::%lapsed-turn-held-p worker (+ t0 (* ms 1000)))))))

(test a-lapsed-turn-counts-until-its-worker-is-seen-asleep
  ;; Asleep on two reads 10 ms apart, its turn no longer counts; running,
  ;; it always does.
  (is (equal '(t t nil nil) (%lapsed-turn-held-by (lambda () (sleep 0.5)))))
  (is (equal '(t t t t)
             (%lapsed-turn-held-by
              (lambda ()
                (loop with end = (+ (clgrpc.util:now-us) 500000)
                      while (< (clgrpc.util:now-us) end))))))
  ;; A collection between the reads starts the watch again: a thread
  ;; stopped for one looks asleep too.
  (%call-with-lapsed-worker
   (lambda () (sleep 0.5))
   (lambda (worker t0)
     (is (clgrpc.util::%lapsed-turn-held-p worker t0))
     (sb-ext:gc)
     ;; The collection woke the thread; it sleeps again.
     (sleep 0.05)
     (is (clgrpc.util::%lapsed-turn-held-p worker (+ t0 20000))
         "a turn lapsed across a collection")
     (is (not (clgrpc.util::%lapsed-turn-held-p worker (+ t0 40000)))))))

(test idle-workers-wait-without-spinning
  ;; Workers the executor keeps (MIN-THREADS) wait for work past their idle
  ;; timeout without using the CPU.
  (let ((executor (clgrpc.util:make-executor :name "idle test" :min-threads 2 :idle-timeout 0.2)))
    (unwind-protect
         (let ((before (/ (clgrpc.util::process-cpu-us) 1d6)))
           (sleep 1.5)
           (let ((used (- (/ (clgrpc.util::process-cpu-us) 1d6) before)))
             (is (< used 0.3) "the idle executor used ~,2F s of CPU in 1.5 s" used)))
      (clgrpc.util:shutdown-executor executor))))

(defun %lock-waiters-sampled-as-waiting (lock-with)
  "Whether the executor's monitor would take three workers, each blocked
taking a lock this thread holds through LOCK-WITH (which takes the lock
and a thunk), for workers waiting on the world: what makes it grow the
pool.  The answer is read once the three are asleep on the lock."
  (let ((executor (clgrpc.util:make-executor :name "lock test" :min-threads 4 :max-threads 4))
        (lock (sb-thread:make-mutex :name "held"))
        (done (list 0)))
    (sb-thread:grab-mutex lock)
    (unwind-protect
         (progn
           (dotimes (i 3)
             (clgrpc.util:executor-submit
              executor 0
              (lambda (lock)
                (funcall lock-with lock (lambda () nil))
                (sb-ext:atomic-incf (car done)))
              lock))
           ;; Until three workers are busy and asleep (or marked waiting for
           ;; the lock): the monitor's sample then says what it would do.
           (loop repeat 400
                 until (sb-thread:with-mutex ((clgrpc.util::executor-park-lock executor))
                         (= 3 (count-if (lambda (w)
                                          (and (clgrpc.util::worker-busy w)
                                               (or (clgrpc.util::worker-on-lock w)
                                                   (clgrpc.util::%sleeping-p (clgrpc.util::worker-stat w)))))
                                        (clgrpc.util::executor-workers executor))))
                 do (sleep 0.005))
           (sleep 0.02)
           (sb-thread:with-mutex ((clgrpc.util::executor-park-lock executor))
             (clgrpc.util::%workers-waiting-p executor)))
      (sb-thread:release-mutex lock)
      (loop repeat 400 until (= 3 (car done)) do (sleep 0.005))
      (clgrpc.util:shutdown-executor executor))))

(test workers-waiting-for-a-brief-lock-do-not-grow-the-pool
  ;; A worker that waits for a lock another worker holds briefly
  ;; (WITH-WORKER-MUTEX) is neither computing nor waiting on the world:
  ;; more workers would only wait for the lock too, each holding what its
  ;; task built.  The monitor leaves such workers out of its sample, so
  ;; they never make it grow the pool; workers asleep on a plain mutex do.
  (is (not (%lock-waiters-sampled-as-waiting
            (lambda (lock thunk) (clgrpc.util:with-worker-mutex (lock) (funcall thunk)))))
      "workers waiting in WITH-WORKER-MUTEX were sampled as waiting on the world")
  (is (%lock-waiters-sampled-as-waiting
       (lambda (lock thunk) (sb-thread:with-mutex (lock) (funcall thunk))))
      "workers asleep on a plain mutex were not sampled as waiting"))

(test cpu-count-follows-the-cgroup-limit-as-go-does
  ;; cpu.max as cgroup v2 writes it: a quota of a quarter of a core counts
  ;; as two CPUs (Go's floor for a limit), none leaves the affinity count.
  (is (= 1/4 (clgrpc.util::%cpu-max-limit "25000 100000")))
  (is (= 3/2 (clgrpc.util::%cpu-max-limit "150000 100000")))
  (is (null (clgrpc.util::%cpu-max-limit "max 100000")))
  (is (null (clgrpc.util::%cpu-max-limit "garbage")))
  (is (null (clgrpc.util::%cpu-max-limit nil)))
  (let ((limit (clgrpc.util:cgroup-cpu-limit)))
    (is (= (clgrpc.util:usable-cpu-count)
           (if limit
               (min (clgrpc.util:affinity-cpu-count) (max 2 (ceiling limit)))
               (clgrpc.util:affinity-cpu-count))))))

(test the-heap-line-names-the-heap-after-the-last-collection
  (clgrpc.util:ensure-heap-guard)
  (sb-ext:gc)
  (let ((after (clgrpc.util:heap-after-last-collection))
        (line (clgrpc.grpc:heap-report-line)))
    (is (and after (plusp after)))
    (is (string= line (format nil "heap live=~D" (clgrpc.util:heap-after-last-collection))))
    (is (<= after (sb-ext:dynamic-space-size)))))

(test the-runtime-line-names-what-the-server-runs-with
  (let* ((server (clgrpc.grpc:make-server :max-handler-threads 7))
         (line (clgrpc.grpc:server-runtime-line server)))
    (is (eql 0 (search (format nil "runtime cpus=~D numcpu=~D "
                               (clgrpc.util:usable-cpu-count) (clgrpc.util:affinity-cpu-count))
                       line)))
    (is (search " handler_threads_max=7 " line))
    (is (search (format nil " reactors=~D " (clgrpc.http2:reactor-count)) line))))
