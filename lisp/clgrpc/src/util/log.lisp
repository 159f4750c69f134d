;;;; Log lines written by a thread of their own.
;;;;
;;;; Reactors and workers must never wait on standard error: when it is a
;;;; pipe that nobody drains (a supervisor that stopped reading, a full
;;;; terminal), a write blocks, and a reactor blocked there serves none of
;;;; its connections.  So LOG-LINE only formats the line and queues it; the
;;;; log thread, started on first use, writes the queue to *ERROR-OUTPUT*
;;;; (its global value, read per line).  The queue is bounded: past
;;;; +LOG-QUEUE-LIMIT+ lines a line is dropped and counted, and the count is
;;;; written with the next line that goes out.

(in-package #:clgrpc.util)

(defconstant +log-queue-limit+ 1000
  "Lines waiting for the log thread beyond which new ones are dropped.")

(defvar *log-lock* (sb-thread:make-mutex :name "clgrpc log"))
(defvar *log-cv* (sb-thread:make-waitqueue :name "clgrpc log"))
(defvar *log-queue* (make-fifo 64))
(defvar *log-dropped* 0)
(defvar *log-thread* nil)
(declaim (type fixnum *log-dropped*))

(defun log-writer-loop ()
  (loop
    (let ((line nil) (dropped 0))
      (sb-thread:with-mutex (*log-lock*)
        (loop while (fifo-empty-p *log-queue*)
              do (sb-thread:condition-wait *log-cv* *log-lock*))
        (setf line (fifo-pop *log-queue*)
              dropped (shiftf *log-dropped* 0)))
      (ignore-errors
       (let ((out (symbol-value '*error-output*)))
         (when (plusp dropped)
           (format out "clgrpc: ~D log lines dropped (the log could not keep up)~%" dropped))
         (write-string line out)
         (terpri out)
         (finish-output out))))))

(defun ensure-log-thread ()
  "Start the log thread, if it is not running (true if it is)."
  (sb-thread:with-mutex (*log-lock*)
    (%ensure-log-thread)))

(defun %ensure-log-thread ()
  (or *log-thread*
      (setf *log-thread* (ignore-errors
                          (sb-thread:make-thread #'log-writer-loop :name "clgrpc log")))))

(defun log-line (control &rest arguments)
  "Queue a line, CLGRPC: and FORMAT of CONTROL and ARGUMENTS, for the log
thread.  Never waits on the log's stream."
  (let ((line (handler-case (concatenate 'string "clgrpc: " (apply #'format nil control arguments))
                (serious-condition () "clgrpc: (a log line could not be formatted)"))))
    (sb-thread:with-mutex (*log-lock*)
      (%ensure-log-thread)
      (if (>= (fifo-count *log-queue*) +log-queue-limit+)
          (incf *log-dropped*)
          (progn (fifo-push *log-queue* line)
                 (sb-thread:condition-notify *log-cv*))))
    nil))

(defun log-drain (&optional (timeout 5))
  "Wait up to TIMEOUT seconds for the queued lines to be written: for
programs about to exit, and for tests.  True if the queue emptied."
  (let ((deadline (+ (now-us) (round (* timeout 1000000)))))
    (loop
      (when (sb-thread:with-mutex (*log-lock*) (fifo-empty-p *log-queue*))
        (return t))
      (when (> (now-us) deadline)
        (return nil))
      (sleep 0.005))))
