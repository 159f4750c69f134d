;;;; A time bound on each execution.  A timer per execution would cost more
;;;; than many decodes do, so one watchdog thread looks at the running
;;;; execution's deadline 20 times a second and interrupts the fuzzing thread
;;;; once it passed.  The interruption checks, in that thread, that the same
;;;; execution is still running: one that ended meanwhile is left alone.

(in-package #:clgrpc.fuzz)

(define-condition execution-timeout (error)
  ((seconds :initarg :seconds :reader execution-timeout-seconds))
  (:report (lambda (c s) (format s "execution took longer than ~,1F s"
                                 (execution-timeout-seconds c)))))

(sb-ext:defglobal **executions** 0)     ; executions started
(sb-ext:defglobal **execution** 0)      ; number of the running execution, 0 if none
(sb-ext:defglobal **deadline** 0)       ; its deadline, internal real time
(declaim (type fixnum **executions** **execution** **deadline**))

(defvar *watchdog* nil)

(defun ensure-watchdog (thread seconds)
  (unless (and *watchdog* (sb-thread:thread-alive-p *watchdog*))
    (setf *watchdog*
          (sb-thread:make-thread
           (lambda ()
             (loop
               (sleep 0.05)
               (let ((running **execution**) (deadline **deadline**))
                 (when (and (plusp running) (> (get-internal-real-time) deadline))
                   (sb-thread:interrupt-thread
                    thread
                    (lambda ()
                      (when (= **execution** running)
                        (setf **execution** 0)
                        (error 'execution-timeout :seconds seconds))))
                   ;; Give the interruption time to land before looking again.
                   (sleep 0.5)))))
           :name "fuzz watchdog"))))

(defmacro with-deadline ((seconds) &body body)
  "Run BODY; past SECONDS, EXECUTION-TIMEOUT is signalled inside it."
  (let ((id (gensym "ID")))
    `(let ((,id (setf **executions** (1+ (logand **executions** #xffffffff)))))
       (ensure-watchdog sb-thread:*current-thread* ,seconds)
       (setf **deadline** (+ (get-internal-real-time)
                             (round (* ,seconds internal-time-units-per-second)))
             **execution** ,id)
       (unwind-protect (progn ,@body)
         (setf **execution** 0)))))
