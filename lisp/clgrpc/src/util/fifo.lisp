;;;; A growable ring-buffer FIFO.  Not synchronized: its owners hold their own
;;;; lock.  Pushing and popping cons nothing once the ring is large enough,
;;;; which matters for the executor's lanes and per-call message queues that see
;;;; every request.

(in-package #:clgrpc.util)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defstruct (fifo (:constructor %make-fifo (items)))
  (items #() :type simple-vector)
  (head 0 :type (and fixnum unsigned-byte))
  (count 0 :type (and fixnum unsigned-byte)))

(defun make-fifo (&optional (capacity 8))
  (%make-fifo (make-array (max 2 capacity) :initial-element nil)))

(declaim (inline fifo-empty-p))
(defun fifo-empty-p (fifo)
  (zerop (fifo-count fifo)))

(defun fifo-grow (fifo)
  (let* ((old (fifo-items fifo))
         (n (length old))
         (new (make-array (* 2 n) :initial-element nil))
         (head (fifo-head fifo)))
    (dotimes (i n)
      (setf (svref new i) (svref old (mod (+ head i) n))))
    (setf (fifo-items fifo) new
          (fifo-head fifo) 0)))

(defun fifo-push (fifo item)
  (declare (type fifo fifo))
  (when (= (fifo-count fifo) (length (fifo-items fifo)))
    (fifo-grow fifo))
  (let* ((items (fifo-items fifo))
         (i (+ (fifo-head fifo) (fifo-count fifo))))
    (declare (type fixnum i))
    (setf (svref items (if (>= i (length items)) (- i (length items)) i)) item)
    (incf (fifo-count fifo))
    item))

(defun fifo-pop (fifo)
  "Remove and return the oldest item (NIL when empty)."
  (declare (type fifo fifo))
  (if (zerop (fifo-count fifo))
      nil
      (let* ((items (fifo-items fifo))
             (head (fifo-head fifo))
             (item (svref items head)))
        (setf (svref items head) nil)   ; let the GC have it
        (let ((next (1+ head)))
          (setf (fifo-head fifo) (if (= next (length items)) 0 next)))
        (decf (fifo-count fifo))
        item)))

(defun fifo-capacity (fifo)
  "How many items FIFO holds before it grows."
  (length (fifo-items fifo)))

(defun fifo-peek (fifo &optional (position 0))
  "The item POSITION places behind the oldest, left queued (NIL if none)."
  (declare (type fifo fifo) (type (and fixnum unsigned-byte) position))
  (if (<= (fifo-count fifo) position)
      nil
      (let ((items (fifo-items fifo)))
        (svref items (mod (+ (fifo-head fifo) position) (length items))))))

(defun fifo-clear (fifo)
  (declare (type fifo fifo))
  (fill (fifo-items fifo) nil)
  (setf (fifo-head fifo) 0 (fifo-count fifo) 0)
  fifo)
