;;;; The heap guard: a full collection when the heap fills with garbage the
;;;; generational collector is not yet willing to look at.
;;;;
;;;; SBCL's heap is a fixed reservation, and its collector leaves an older
;;;; generation alone until that generation's objects are old enough on
;;;; average.  A server that holds much for a while (responses parked for a
;;;; peer's window, say) and churns through large buffers meanwhile promotes
;;;; garbage into those generations faster than they come of age: the heap
;;;; can then be exhausted by garbage while what is live is well within it.
;;;; So older generations may be collected once their objects are a quarter
;;;; of the way to SBCL's default age, and after any collection that leaves
;;;; more than half the heap in use, a
;;;; thread of its own runs a full collection, which looks at everything.
;;;; One that freed less than an eighth of the heap found mostly live data:
;;;; the next waits until the heap has grown by an eighth since, or ten
;;;; seconds have passed, so a server whose live data alone is past half the
;;;; heap is not collected in full over and over.

(in-package #:clgrpc.util)

(defvar *heap-guard-lock* (sb-thread:make-mutex :name "heap guard"))
(defvar *heap-guard-semaphore* (sb-thread:make-semaphore :name "heap guard"))
(defvar *heap-guard-thread* nil)

;; The heap in use after the guard's last full collection if that freed
;; little (0: none, or it freed much), when it ran, and how many it has run.
(declaim (type sb-ext:word *heap-after-full-collection* *heap-guard-collections*)
         (type fixnum *heap-guard-last-us*))
(sb-ext:defglobal *heap-after-full-collection* 0)
(sb-ext:defglobal *heap-guard-last-us* 0)
(sb-ext:defglobal *heap-guard-collections* 0)

;; The heap in use right after the last collection of any kind (0: none
;; yet), which %AFTER-COLLECTION notes.
(declaim (type sb-ext:word *heap-after-collection*))
(sb-ext:defglobal *heap-after-collection* 0)

(defun heap-after-last-collection ()
  "The octets of heap in use right after the last garbage collection seen
by the heap guard (ENSURE-HEAP-GUARD), or NIL before the first: what was
live then, and the garbage of older generations that collection did not
look at."
  (let ((octets *heap-after-collection*))
    (and (plusp octets) octets)))

(defconstant +heap-guard-backoff-us+ 10000000
  "How long a full collection that freed little holds the guard back.")

;; The heap in use past which the guard collects: NIL for half the heap.
(sb-ext:defglobal *heap-guard-limit* nil)

(defun heap-guard-threshold ()
  "The heap in use past which the guard asks for a full collection."
  (let* ((size (sb-ext:dynamic-space-size))
         (limit (or *heap-guard-limit* (floor size 2))))
    (if (or (zerop *heap-after-full-collection*)
            (> (- (now-us) *heap-guard-last-us*) +heap-guard-backoff-us+))
        limit
        (max limit (+ *heap-after-full-collection* (floor size 8))))))

(defun %after-collection ()
  "An after-GC hook: it may run on any thread, so it only notes the heap
in use and wakes the guard."
  (setf *heap-after-collection* (sb-kernel:dynamic-usage))
  (when (> (sb-kernel:dynamic-usage) (heap-guard-threshold))
    (sb-thread:signal-semaphore *heap-guard-semaphore*)))

(defun %collect-in-full ()
  (let ((before (sb-kernel:dynamic-usage)))
    (sb-ext:gc :full t)
    (let ((after (sb-kernel:dynamic-usage)))
      (setf *heap-after-full-collection*
            (if (>= (- before after) (floor (sb-ext:dynamic-space-size) 8)) 0 after)
            *heap-guard-last-us* (now-us))
      (incf *heap-guard-collections*))))

(defun %heap-guard-loop ()
  (loop
    (sb-thread:wait-on-semaphore *heap-guard-semaphore*)
    ;; Wake-ups that came while it collected are answered by that collection.
    (loop while (sb-thread:try-semaphore *heap-guard-semaphore*))
    (when (> (sb-kernel:dynamic-usage) (heap-guard-threshold))
      (handler-case (%collect-in-full)
        (serious-condition (e)
          (log-line "heap guard: ~A" e))))))

(defconstant +older-generations-minimum-age+ 0.25d0
  "The average age (in collections of the generation below) past which an
older generation may be collected; SBCL's default is 0.75.")

(defun ensure-heap-guard ()
  "Start the heap guard, once per process, and let the collector look at
the older generations sooner than SBCL's default does."
  (sb-thread:with-mutex (*heap-guard-lock*)
    (unless (and *heap-guard-thread* (sb-thread:thread-alive-p *heap-guard-thread*))
      (loop for generation from 1 to 4
            do (setf (sb-ext:generation-minimum-age-before-gc generation)
                     (min +older-generations-minimum-age+
                          (sb-ext:generation-minimum-age-before-gc generation))))
      (pushnew '%after-collection sb-ext:*after-gc-hooks*)
      (setf *heap-guard-thread*
            (sb-thread:make-thread #'%heap-guard-loop :name "clgrpc heap guard")))))
