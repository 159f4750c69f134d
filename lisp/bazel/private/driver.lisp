;;;; The driver of the Lisp rules' build actions, run by SBCL as
;;;;
;;;;   sbcl --core ... --load driver.lisp --end-toplevel-options COMMAND ARG...
;;;;
;;;;   compile REQUIRES N OUT SRC NAME ... FASL...
;;;;                                          load FASL..., then compile the N sources in order,
;;;;                                          each SRC (workspace name NAME) to the fasl OUT,
;;;;                                          loading each fasl before the next source
;;;;   save OUT TOPLEVEL COMPRESS REQUIRES FASL...
;;;;                                          load FASL... and save an executable whose entry
;;;;                                          point is the function TOPLEVEL ("package:name")
;;;;   scrub EXE                              clear what a save left of the saving process's
;;;;                                          garbage in the uncompressed executable EXE
;;;;   fillers EXE                            print how many fillers EXE has, and how many of them
;;;;                                          are not clear ("fillers N unclear M"); changes nothing
;;;;
;;;; REQUIRES is a comma-separated list of SBCL modules (contribs) to require first, or "-".
;;;; Compiler output is kept and shown only when the action fails, so that builds stay quiet.

(defpackage #:bazel.lisp.driver
  (:use #:common-lisp))

(in-package #:bazel.lisp.driver)

(defun fail (format-control &rest args)
  (format *error-output* "~&lisp driver: ~?~%" format-control args)
  (finish-output *error-output*)
  (sb-ext:exit :code 1 :abort t))

(defun require-modules (spec)
  (unless (string= spec "-")
    (loop for start = 0 then (1+ end)
          for end = (position #\, spec :start start)
          for name = (subseq spec start end)
          do (require (intern (string-upcase name) :keyword))
          while end)))

(defun load-fasl (fasl)
  "Load the fasl file FASL from a stream that registers no finalizer.
OPEN would register one to close the descriptor, and the finalizer thread, which SBCL wakes after
every garbage collection, would then tidy its table at whatever moment the scheduler allows,
allocating in between the loader's allocations: a saved heap then differed from run to run in the
padding its last collection leaves between objects."
  (let ((fd (sb-unix:unix-open fasl sb-unix:o_rdonly 0)))
    (unless fd
      (fail "cannot open ~A" fasl))
    (let ((stream (sb-sys:make-fd-stream fd :input t :element-type '(unsigned-byte 8)
                                            :auto-close nil :file fasl :name fasl)))
      (unwind-protect (load stream)
        (close stream)))))

(defun load-fasls (fasls)
  (dolist (fasl fasls)
    (load-fasl fasl)))

(defun call-with-captured-output (thunk)
  "Runs THUNK with compiler output captured; prints it only if THUNK signals or returns NIL."
  (let* ((log (make-string-output-stream))
         (ok (let ((*standard-output* log)
                   (*error-output* log))
               (handler-case (funcall thunk)
                 (error (e)
                   (format log "~&~A~%" e)
                   nil)))))
    (unless ok
      (write-string (get-output-stream-string log) *error-output*))
    ok))

;;; SBCL records each source's write date in its fasl, and Bazel's sources have arbitrary ones
;;; (checkout time). Reporting a fixed date while compiling makes fasls depend on content only.
(defun fix-source-write-dates ()
  (sb-ext:without-package-locks
    (sb-int:encapsulate 'file-write-date 'bazel-fixed-date
                        (lambda (function pathspec)
                          (declare (ignore function pathspec))
                          0))))

(defun compile-one (out src name)
  (unless (call-with-captured-output
           (lambda ()
             ;; The fasl names the source by its workspace path, not the sandbox's, and gensyms
             ;; are numbered from zero in each file: a fasl then depends only on its source and
             ;; what was loaded before it, not on how much the process compiled first.
             (let ((sb-c::*source-namestring* name)
                   (*gensym-counter* 0))
               (multiple-value-bind (fasl warnings-p failure-p)
                   (compile-file src :output-file out :verbose nil :print nil)
                 (declare (ignore warnings-p))
                 (and fasl (not failure-p))))))
    (fail "compiling ~A failed (warnings count as failures)" name)))

(defun compile-command (requires n rest)
  (require-modules requires)
  ;; A fasl begins with a shebang line naming the runtime that compiled it (so that it can be run
  ;; as a script), an absolute path into the output base that differs between workspaces, users
  ;; and machines. None is written when SBCL does not know its runtime's path.
  (setf sb-ext:*runtime-pathname* nil)
  (let ((sources (loop repeat n
                       for (out src name) on rest by #'cdddr
                       collect (list out src name)))
        (fasls (nthcdr (* 3 n) rest)))
    (load-fasls fasls)
    (fix-source-write-dates)
    (loop for (out src name) in sources
          do (compile-one out src name)
             ;; Loading what was just compiled re-evaluates its DEFPACKAGEs, whose export lists
             ;; are shorter than what the compilation exported (generated code exports as it
             ;; defines): a variance that exists only because both happen in one process.
             (handler-bind ((sb-int:package-at-variance #'muffle-warning))
               (load out)))))

(defun resolve-toplevel (designator)
  (let* ((colon (or (position #\: designator)
                    (fail "toplevel ~S is not package:function" designator)))
         (package (string-upcase (subseq designator 0 colon)))
         (name (string-upcase (string-left-trim ":" (subseq designator colon))))
         (symbol (and (find-package package) (find-symbol name package))))
    (unless (and symbol (fboundp symbol))
      (fail "toplevel function ~A is not defined" designator))
    symbol))

;;; What save-lisp-and-die would otherwise write into the image that differs from one build to the
;;; next, although the program is the same (found by comparing two saves word by word):
;;; - SB-VM::CALLBACK-WRAPPER-TRAMPOLINE holds the address of a C function of the runtime, which
;;;   ASLR moves on every run; the runtime stores it again at startup, so the saved value is unused.
;;; - *GC-RUN-TIME* (CPU time spent in GC) and SB-INT:*N-BYTES-FREED-OR-PURIFIED* (bytes freed so
;;;   far) are counters of this build process.
;;; - On x86-64, the free part of the text space (immobile code) keeps the bytes of code objects
;;;   that were freed, and SBCL 2.2.9 saves the rest of the last page as they are: C heap
;;;   addresses (ASLR again) ended up in the executable.
;;; save-lisp-and-die collects garbage itself after *SAVE-HOOKS* have run, so all this is done
;;; again after each of those collections, by an after-GC hook that acts only while *SAVING* is
;;; bound (a binding is not saved: the hook does nothing in the saved program, which also removes
;;; it at startup).
(defvar *saving* nil)

(defun zero-free-text-space ()
  ;; Only SBCLs with a text space (x86-64) have this variable; *FEATURES* no longer says so.
  #+#.(cl:if (cl:find-symbol "*TEXT-SPACE-FREE-POINTER*" "SB-VM") '(:and) '(:or))
  (sb-sys:without-gcing
    ;; Must not cons: it runs inside GC hooks.
    ;; Only the rest of the page that holds the free pointer is saved, so only it is scrubbed
    ;; (to a 64 KiB boundary, a multiple of any page size SBCL uses). Scrubbing the whole free
    ;; part (about 130 MB, after every GC of the save) also wrote to pages past the last one in
    ;; use, and one save crashed there ("maximum interrupt nesting depth exceeded").
    (let* ((free sb-vm:*text-space-free-pointer*)
           (start (sb-sys:sap-int free))
           (end (min (+ sb-vm:text-space-start sb-vm:text-space-size)
                     (* 65536 (ceiling start 65536))))
           (n (- end start)))
      (declare (type fixnum start end n))
      (loop for i of-type fixnum from 0 below n by sb-vm:n-word-bytes
            unless (zerop (sb-sys:sap-ref-word free i))
              do (setf (sb-sys:sap-ref-word free i) 0)))))

(defun scrub-image ()
  (when *saving*
    ;; x86-64 only: ARM64 calls the C function by its address in the linkage table instead.
    (let ((trampoline (find-symbol "CALLBACK-WRAPPER-TRAMPOLINE" "SB-VM")))
      (when (and trampoline (boundp trampoline))
        (sb-ext:without-package-locks (set trampoline 0))))
    (setf sb-ext:*gc-run-time* 0
          sb-int:*n-bytes-freed-or-purified* 0)
    (zero-free-text-space)))

(defun remove-scrub-hooks ()
  (setf sb-ext:*after-gc-hooks* (remove 'scrub-image sb-ext:*after-gc-hooks*)
        sb-ext:*save-hooks* (remove 'scrub-image sb-ext:*save-hooks*)
        sb-ext:*init-hooks* (remove 'remove-scrub-hooks sb-ext:*init-hooks*)))

;;; The finalizer thread runs beside the loader: SBCL wakes it after every collection. Whatever
;;; it does then happens at whatever moment the scheduler allows, between the loader's
;;; allocations, and the saved heap followed: under load, saves of the same fasls differed, in the
;;; order in which the last collection copied objects (the keys of PCL's constructor table) and,
;;; more rarely, in the ctype hashes that SBCL draws from the allocation pointer. So a save stops
;;; the thread before it loads anything and only one thread ever allocates. SAVE-LISP-AND-DIE
;;; stops the thread itself and insists that there is one; it is told that none is fine, and the
;;; saved program takes that back at startup, before SBCL starts its finalizer thread again.
(defun allow-stop-without-finalizer-thread ()
  (sb-ext:without-package-locks
    (sb-int:encapsulate 'sb-impl::finalizer-thread-stop 'allow-no-thread
                        (lambda (stop) (when sb-impl::*finalizer-thread* (funcall stop))))))

(defun restore-finalizer-thread-stop ()
  (sb-ext:without-package-locks
    (sb-int:unencapsulate 'sb-impl::finalizer-thread-stop 'allow-no-thread))
  (setf sb-ext:*init-hooks* (remove 'restore-finalizer-thread-stop sb-ext:*init-hooks*)))

(defun stop-finalizer-thread ()
  "Stop the finalizer thread in a way whose allocation does not depend on timing.
SBCL's own FINALIZER-THREAD-STOP joins the thread by waiting on its exit semaphore, and what
the waiting allocates depends on whether the thread was already done; and the dying thread
closes its allocation regions only after it has signalled that semaphore, while this thread
runs on and allocates (under load, what this thread allocated next began a few words apart).
Here the thread is told to stop, awaited without allocating until it has put itself on the
joinable list (the last thing it does in Lisp), and then reaped with pthread_join, which
returns only once the thread has closed its regions."
  (sb-thread::with-system-mutex (sb-thread::*make-thread-lock*)
    (sb-alien:alien-funcall
     (sb-alien:extern-alien "finalizer_thread_stop" (function sb-alien:void)))
    (loop until sb-thread::*joinable-threads*
          do (sb-thread:thread-yield))
    (sb-thread::%dispose-thread-structs))
  (allow-stop-without-finalizer-thread)
  (push 'restore-finalizer-thread-stop sb-ext:*init-hooks*))

;;; Every type object gets an opaque hash from SB-KERNEL::CTYPE-RANDOM, which SBCL draws from the
;;; allocation pointer. Some allocation in a build still varies from run to run (under load, amd64
;;; saves of the same fasls came out two ways that differed only in these hashes), so a save draws
;;; them from a counter instead: they then depend only on the order in which the types are made.
;;; The saved program takes SBCL's own function back at startup.
(defvar *sbcl-ctype-random* #'sb-kernel::ctype-random)
(defvar *ctype-counter* 0)
(declaim (type (unsigned-byte 28) *ctype-counter*))

(defun counted-ctype-random ()
  ;; The hash state's linear congruential step, as SBCL's cross-compiler uses, on 28 bits.
  (setf *ctype-counter* (logand #xfffffff (+ (* 1103515245 *ctype-counter*) 12345))))

(defun restore-ctype-random ()
  (sb-ext:without-package-locks
    (setf (fdefinition 'sb-kernel::ctype-random) *sbcl-ctype-random*))
  (setf sb-ext:*init-hooks* (remove 'restore-ctype-random sb-ext:*init-hooks*)))

(defun count-ctype-hashes ()
  (sb-ext:without-package-locks
    (setf (fdefinition 'sb-kernel::ctype-random) #'counted-ctype-random))
  (push 'restore-ctype-random sb-ext:*init-hooks*))

(defconstant +bytes-consed-between-gcs+ (floor (* 1024 1024 1024) 20)
  "What SBCL allocates between two collections with its default 1 GiB heap.")

(defconstant +generation-bytes-consed-between-gcs+ (floor (* 1024 1024 1024) 100)
  "What SBCL lets each older generation grow by between its collections with
its default 1 GiB heap.")

(defun save-command (out toplevel compress requires fasls)
  (stop-finalizer-thread)
  (count-ctype-hashes)
  (require-modules requires)
  (load-fasls fasls)
  (let ((entry (resolve-toplevel toplevel))
        (compression (and (string= compress "1")
                          (or (member :sb-core-compression *features*)
                              (fail "this SBCL was built without core compression"))
                          t)))
    ;; Last of the save hooks, so that nothing runs between it and the save's own GCs.
    (setf sb-ext:*save-hooks* (append sb-ext:*save-hooks* (list 'scrub-image)))
    (push 'scrub-image sb-ext:*after-gc-hooks*)
    (push 'remove-scrub-hooks sb-ext:*init-hooks*)
    (let ((*saving* t))
      (sb-ext:save-lisp-and-die
       out
       :executable t
       ;; Every argument goes to the program; the runtime parses none of its own.
       :save-runtime-options t
       :compression compression
       :toplevel (lambda ()
                   (sb-ext:disable-debugger)
                   ;; SBCL collects after a twentieth of its heap is allocated (51 MiB
                   ;; for the default 1 GiB, 205 MiB for the 4 GiB executables are saved
                   ;; with, sbcl_action.bzl), and an older generation after a hundredth
                   ;; more has been promoted into it. A larger heap is a higher ceiling,
                   ;; not a reason to hold four times the garbage: keep the default's.
                   (setf (sb-ext:bytes-consed-between-gcs) +bytes-consed-between-gcs+)
                   (loop for generation from 0 to 5
                         do (setf (sb-ext:generation-bytes-consed-between-gcs generation)
                                  +generation-bytes-consed-between-gcs+))
                   ;; The next collection was already set for a twentieth of the heap
                   ;; at startup; one now sets it by the interval above (and costs a
                   ;; few milliseconds, before the program has allocated anything).
                   (sb-ext:gc)
                   (let ((code (funcall entry)))
                     (sb-ext:exit :code (if (integerp code) code 0))))))))

;;; The last collection of SAVE-LISP-AND-DIE copies the heap into pages that held the saving
;;; process's own objects, and SBCL 2.2.9 does not clear them first where it places small
;;; objects of mixed raw and tagged slots: to keep such an object within one card, it skips to the
;;; next card and writes only the header of a filler object over the gap. The rest of the gap
;;; keeps whatever the process had there, and what it had there follows every allocation
;;; that varied in the build, down to the name of the temporary directory: two saves of the same
;;; fasls came out a few words apart, inside such gaps. Nothing reads a filler's payload, so
;;; SCRUB-COMMAND zeroes it in the saved file. It walks the pages of that kind with the
;;; runtime's own object sizes, so it must run in the SBCL that saved the file.
(defconstant +core-magic+ #x5342434C)   ; "SBCL"
(defconstant +directory-entry+ 3861)
(defconstant +page-table-entry+ 3880)
(defconstant +end-entry+ 3840)
(defconstant +dynamic-space-id+ 1)
(defconstant +deflated-space-flag+ 8)
(defconstant +small-mixed-page-type+ 4)
(defconstant +page-table-entry-bytes+ 10) ; the packed scan start (8 bytes) and words used (2)

(defun object-bytes (address)
  (sb-alien:alien-funcall
   (sb-alien:extern-alien "primitive_object_size"
                          (function sb-alien:unsigned-long sb-alien:unsigned-long))
   address))

(defun scrub-page (sap start used clear)
  "Find the fillers in the USED bytes of a page at byte START of SAP, zeroing their payloads if
CLEAR; return how many there were and how many of them had a payload that was not zero."
  (let ((offset 0) (fillers 0) (unclear 0))
    (loop while (< offset used)
          do (let* ((object (+ start offset))
                    (size (object-bytes (+ (sb-sys:sap-int sap) object))))
               (unless (< 0 size (1+ (- used offset)))
                 (fail "scrub: no object boundary at byte ~D of a page" offset))
               (when (= (logand (sb-sys:sap-ref-word sap object) #xff) sb-vm:filler-widetag)
                 (incf fillers)
                 (loop with dirty = nil
                       for i from sb-vm:n-word-bytes below size by sb-vm:n-word-bytes
                       unless (zerop (sb-sys:sap-ref-word sap (+ object i)))
                         do (setf dirty t)
                            (when clear (setf (sb-sys:sap-ref-word sap (+ object i)) 0))
                       finally (when dirty (incf unclear))))
               (incf offset size)))
    (values fillers unclear)))

(defun scrub-core (sap length clear)
  "Find the fillers of the executable core in the LENGTH bytes at SAP, zeroing their payloads if
CLEAR; return how many there are and how many were not clear (both 0 for a compressed core)."
  (flet ((word (offset)
           (unless (<= 0 offset (- length sb-vm:n-word-bytes))
             (fail "scrub: not an executable with an SBCL core"))
           (sb-sys:sap-ref-word sap offset)))
    (let* ((core (word (- length 16)))
           (page-size (sb-alien:extern-alien "os_vm_page_size" sb-alien:unsigned-long))
           (dynamic nil)
           (page-table nil))
      (unless (and (= (word (- length 8)) +core-magic+) (= (word core) +core-magic+))
        (fail "scrub: not an executable with an SBCL core"))
      (flet ((data (page) (+ core (* page-size (1+ page)))))
        (loop for entry = (+ core sb-vm:n-word-bytes) then (+ entry (* words sb-vm:n-word-bytes))
              for type = (word entry)
              for words = (word (+ entry sb-vm:n-word-bytes))
              until (= type +end-entry+)
              do (case type
                   (#.+directory-entry+
                    (loop for space from (+ entry 16) below (+ entry (* words 8)) by 40
                          when (= (logandc2 (word space) +deflated-space-flag+) +dynamic-space-id+)
                            do (when (logtest (word space) +deflated-space-flag+)
                                 ;; Its pages are a zstd stream: left as saved.
                                 (return-from scrub-core (values 0 0)))
                               (setf dynamic (data (word (+ space 16))))))
                   (#.+page-table-entry+
                    (setf page-table (list (word (+ entry 24)) (word (+ entry 32))
                                           (data (word (+ entry 40))))))))
        (unless (and dynamic page-table)
          (fail "scrub: the core has no dynamic space or page table"))
        (destructuring-bind (pages bytes ptes) page-table
          (unless (= bytes (* 8 (ceiling (* pages +page-table-entry-bytes+) 8)))
            (fail "scrub: unexpected page table entries (~D pages in ~D bytes)" pages bytes))
          (unless (and (<= (+ ptes bytes) length)
                       (<= (+ dynamic (* pages sb-vm:gencgc-page-bytes)) length))
            (fail "scrub: the core is shorter than its page table says"))
          (loop with fillers = 0 and unclear = 0
                for page below pages
                for pte = (+ ptes (* page +page-table-entry-bytes+))
                for type = (logand (sb-sys:sap-ref-64 sap pte) 7)
                for used = (* (logandc2 (sb-sys:sap-ref-16 sap (+ pte 8)) 1) sb-vm:n-word-bytes)
                when (and (= type +small-mixed-page-type+) (plusp used))
                  do (multiple-value-bind (n dirty)
                         (scrub-page sap (+ dynamic (* page sb-vm:gencgc-page-bytes)) used clear)
                       (incf fillers n)
                       (incf unclear dirty))
                finally (return (values fillers unclear))))))))

(defun read-file (file)
  (with-open-file (in file :element-type '(unsigned-byte 8))
    (let ((bytes (make-array (file-length in) :element-type '(unsigned-byte 8))))
      (read-sequence bytes in)
      bytes)))

(defun scrub-command (file)
  (let ((bytes (read-file file)))
    (sb-sys:with-pinned-objects (bytes)
      (scrub-core (sb-sys:vector-sap bytes) (length bytes) t))
    (with-open-file (out file :element-type '(unsigned-byte 8) :direction :output
                              :if-exists :overwrite)
      (write-sequence bytes out))))

(defun fillers-command (file)
  (let ((bytes (read-file file)))
    (multiple-value-bind (fillers unclear)
        (sb-sys:with-pinned-objects (bytes)
          (scrub-core (sb-sys:vector-sap bytes) (length bytes) nil))
      (format t "fillers ~D unclear ~D~%" fillers unclear))))

(defun main (args)
  (let ((command (first args))
        (args (rest args)))
    (cond ((and (equal command "compile") (>= (length args) 2)
                (every #'digit-char-p (second args))
                (>= (length (cddr args)) (* 3 (parse-integer (second args)))))
           (compile-command (first args) (parse-integer (second args)) (cddr args)))
          ((and (equal command "save") (>= (length args) 4))
           (destructuring-bind (out toplevel compress requires &rest fasls) args
             (save-command out toplevel compress requires fasls)))
          ((and (equal command "scrub") (= (length args) 1))
           (scrub-command (first args)))
          ((and (equal command "fillers") (= (length args) 1))
           (fillers-command (first args)))
          (t (fail "usage: compile REQUIRES N OUT SRC NAME ... FASL... | save OUT TOPLEVEL COMPRESS REQUIRES FASL... | scrub EXE | fillers EXE")))
    (sb-ext:exit :code 0)))

;; SBCL leaves only the program name and the arguments after --end-toplevel-options here.
(main (rest sb-ext:*posix-argv*))
