;;;; An elastic pool of worker threads.
;;;;
;;;; A task is a function and one argument (no closure per task).  Submitting
;;;; wakes an idle worker if there is one, else starts a thread up to
;;;; MAX-THREADS, else queues.  Idle workers exit after IDLE-TIMEOUT seconds,
;;;; so a burst leaves no threads behind but steady load never pays for
;;;; thread creation.  A worker that finishes a task while KEEP-IDLE others
;;;; are idle exits at once instead.  Idle threads are not free: every GC
;;;; stops every thread, and on a busy machine each must be scheduled to
;;;; acknowledge, so a hundred idle workers left by a burst made collections
;;;; take tens of milliseconds (PERFORMANCE.md).  The idle timeout alone does
;;;; not shrink the pool under light load: wake-ups go round all idle
;;;; workers, so none stays idle long enough.  The gRPC server runs unary handlers on a small pool
;;;; (they are short, and more runnable threads than cores only adds context
;;;; switches) and streaming handlers, which block waiting for messages, on a
;;;; large one so a long-lived stream cannot starve others.

(in-package #:clgrpc.util)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defstruct (worker-pool (:constructor %make-worker-pool))
  (name "clgrpc worker" :type string)
  (lock (sb-thread:make-mutex :name "worker pool") :type sb-thread:mutex)
  (cv (sb-thread:make-waitqueue) :type sb-thread:waitqueue)
  (done-cv (sb-thread:make-waitqueue) :type sb-thread:waitqueue)
  (tasks (make-fifo 64) :type fifo)     ; function, argument, function, ...
  (threads 0 :type fixnum)
  (idle 0 :type fixnum)
  (max-threads 16 :type fixnum)
  (idle-timeout-us 30000000 :type fixnum)
  (keep-idle most-positive-fixnum :type fixnum)
  (wrapper nil :type (or null function)) ; (lambda (thunk)) around each worker
  ;; Workers wanted by submitters that must not create threads themselves
  ;; (*DEFER-THREAD-CREATION*), and the thread that starts them.
  (spawns-wanted 0 :type fixnum)
  (spawner nil)
  (spawner-cv (sb-thread:make-waitqueue) :type sb-thread:waitqueue)
  (shutdown nil))

(defvar *defer-thread-creation* nil
  "True on threads that must never wait for a thread to be created (the
HTTP/2 reactors, which serve every connection): a worker they need is
started by the pool's spawner thread instead.")

(defun make-worker-pool (&key (name "clgrpc worker") (max-threads 16) (idle-timeout 30)
                              (keep-idle most-positive-fixnum) wrapper)
  "WRAPPER, if given, is called with a thunk in each new worker thread and
must call it: the place to bind per-thread specials such as scratch buffers.
The pool's spawner thread starts with it, so that threads that must not
create threads (*DEFER-THREAD-CREATION*) never need to."
  (let ((pool (%make-worker-pool :name name :max-threads max-threads
                                 :idle-timeout-us (round (* idle-timeout 1000000))
                                 :keep-idle keep-idle
                                 :wrapper wrapper)))
    (setf (worker-pool-spawner pool)
          (sb-thread:make-thread #'spawner-loop :name (format nil "~A spawner" name)
                                                :arguments (list pool)))
    pool))

(defun pool-thread-count (pool) (worker-pool-threads pool))
(defun pool-max-threads (pool) (worker-pool-max-threads pool))
(defun pool-busy-count (pool)
  "Workers running a task (read without the pool's lock: an estimate)."
  (- (worker-pool-threads pool) (worker-pool-idle pool)))
(defun pool-idle-count (pool) (worker-pool-idle pool))

(defun worker-loop (pool)
  (declare (type worker-pool pool))
  (let ((lock (worker-pool-lock pool))
        (tasks (worker-pool-tasks pool)))
    (loop
      (let ((fn nil) (arg nil))
        (sb-thread:with-mutex (lock)
          (loop while (and (fifo-empty-p tasks) (not (worker-pool-shutdown pool)))
                do (when (>= (worker-pool-idle pool) (worker-pool-keep-idle pool))
                     (return))          ; enough idle workers: exit
                   (incf (worker-pool-idle pool))
                   (let ((woken (wait-on (worker-pool-cv pool) lock
                                         (+ (now-us) (worker-pool-idle-timeout-us pool)))))
                     (decf (worker-pool-idle pool))
                     (when (and (not woken) (fifo-empty-p tasks))
                       (return))))
          (when (fifo-empty-p tasks)    ; idle timeout or shutdown
            (decf (worker-pool-threads pool))
            (sb-thread:condition-broadcast (worker-pool-done-cv pool))
            (return-from worker-loop))
          (setf fn (fifo-pop tasks) arg (fifo-pop tasks)))
        ;; Tasks handle their own errors; this only keeps a bug in one task
        ;; from killing the worker (and, with the debugger disabled, the
        ;; whole process).
        (handler-case (funcall (the function fn) arg)
          (serious-condition () nil))))))

(defun start-worker (pool)
  (sb-thread:make-thread
   (lambda ()
     (let ((wrapper (worker-pool-wrapper pool)))
       (if wrapper
           (funcall wrapper (lambda () (worker-loop pool)))
           (worker-loop pool))))
   :name (worker-pool-name pool)))

(defun spawner-loop (pool)
  "Start the workers that submitters on reactor threads asked for, until
the pool shuts down."
  (declare (type worker-pool pool))
  (let ((lock (worker-pool-lock pool)))
    (loop
      (let ((n 0))
        (declare (type fixnum n))
        (sb-thread:with-mutex (lock)
          (loop while (and (zerop (worker-pool-spawns-wanted pool))
                           (not (worker-pool-shutdown pool)))
                do (sb-thread:condition-wait (worker-pool-spawner-cv pool) lock))
          (when (worker-pool-shutdown pool)
            ;; Workers asked for and never started are no longer counted.
            (decf (worker-pool-threads pool) (shiftf (worker-pool-spawns-wanted pool) 0))
            (setf (worker-pool-spawner pool) nil)
            (sb-thread:condition-broadcast (worker-pool-done-cv pool))
            (return-from spawner-loop))
          ;; Only as many as tasks still wait for: a worker that finished
          ;; meanwhile may have taken one, and a thread started for nothing
          ;; would only exit again.
          (let* ((wanted (shiftf (worker-pool-spawns-wanted pool) 0))
                 (waiting (- (ash (fifo-count (worker-pool-tasks pool)) -1)
                             (worker-pool-idle pool))))
            (setf n (max 0 (min wanted waiting)))
            (decf (worker-pool-threads pool) (- wanted n))))
        (dotimes (i n)
          (start-worker-or-uncount pool))))))

(defun start-worker-or-uncount (pool)
  "Start a worker already counted in THREADS; if that fails, uncount it."
  (handler-case (start-worker pool)
    (error ()
      (sb-thread:with-mutex ((worker-pool-lock pool))
        (decf (worker-pool-threads pool))))))

(defun pool-submit (pool function argument)
  "Run (FUNCTION ARGUMENT) on a worker.  Returns NIL if the pool is shut down."
  (declare (type worker-pool pool))
  (let ((spawn nil))
    (sb-thread:with-mutex ((worker-pool-lock pool))
      (when (worker-pool-shutdown pool)
        (return-from pool-submit nil))
      (let ((tasks (worker-pool-tasks pool)))
        (fifo-push tasks function)
        (fifo-push tasks argument)
        ;; Compare queued tasks with idle workers rather than just testing
        ;; for one idle worker: a worker that was notified stays counted as
        ;; idle until it runs, and must not absorb a second task's wakeup.
        (cond ((<= (ash (fifo-count tasks) -1) (worker-pool-idle pool))
               (sb-thread:condition-notify (worker-pool-cv pool)))
              ((< (worker-pool-threads pool) (worker-pool-max-threads pool))
               (incf (worker-pool-threads pool))
               (if (and *defer-thread-creation* (worker-pool-spawner pool))
                   (progn (incf (worker-pool-spawns-wanted pool))
                          (sb-thread:condition-notify (worker-pool-spawner-cv pool)))
                   (setf spawn t))))))
    ;; Thread creation takes long enough not to do it holding the lock.
    (when spawn
      (start-worker-or-uncount pool))
    t))

(defun pool-shutdown (pool &key (timeout 5))
  "Stop accepting tasks, let queued ones finish, and wait up to TIMEOUT
seconds for the workers to exit.  Returns true if they all did."
  (let ((deadline (+ (now-us) (round (* timeout 1000000)))))
    (sb-thread:with-mutex ((worker-pool-lock pool))
      (setf (worker-pool-shutdown pool) t)
      (sb-thread:condition-broadcast (worker-pool-cv pool))
      (sb-thread:condition-broadcast (worker-pool-spawner-cv pool))
      (loop while (or (plusp (worker-pool-threads pool)) (worker-pool-spawner pool))
            do (unless (wait-on (worker-pool-done-cv pool) (worker-pool-lock pool) deadline)
                 (return)))
      (zerop (worker-pool-threads pool)))))
