;;;; How many CPUs this process may use: its affinity mask, lowered to its
;;;; cgroup's CPU limit as Go (1.25 on) sizes GOMAXPROCS, so that a Go and a
;;;; Lisp server given the same placement and quota size themselves alike.

(in-package #:clgrpc.util)

(defun usable-cpu-count ()
  "The CPUs this process may use: AFFINITY-CPU-COUNT, lowered to the CPU
limit of its cgroup (CGROUP-CPU-LIMIT) rounded up, but never below 2 for a
limit, as Go's default GOMAXPROCS: a quota is an average over a period, and
two threads can share it."
  (let ((cpus (affinity-cpu-count))
        (limit (cgroup-cpu-limit)))
    (if limit
        (min cpus (max 2 (ceiling limit)))
        cpus)))

(defun affinity-cpu-count ()
  "The CPUs this process may run on: its affinity mask, which a benchmark's
CPU placement or a cpuset narrows; else the online CPUs."
  (let ((mask (make-array 128 :element-type '(unsigned-byte 8) :initial-element 0)))
    (sb-sys:with-pinned-objects (mask)
      (if (zerop (sb-alien:alien-funcall
                  (sb-alien:extern-alien "sched_getaffinity"
                                         (function sb-alien:int sb-alien:int sb-alien:unsigned-long
                                                   sb-sys:system-area-pointer))
                  0 (length mask) (sb-sys:vector-sap mask)))
          (max 1 (loop for octet across mask sum (logcount octet)))
          (max 1 (the fixnum (sb-alien:alien-funcall
                              (sb-alien:extern-alien "sysconf" (function sb-alien:long sb-alien:int))
                              84)))))))         ; _SC_NPROCESSORS_ONLN on Linux

(defun %read-first-line (path)
  (with-open-file (in path :if-does-not-exist nil)
    (and in (read-line in nil))))

(defun %cpu-max-limit (line)
  "The cores a cgroup v2 cpu.max line (\"QUOTA PERIOD\" or \"max PERIOD\")
allows, or NIL for none."
  (let* ((space (and line (position #\Space line)))
         (quota (and space (parse-integer line :end space :junk-allowed t)))
         (period (and space (parse-integer line :start (1+ space) :junk-allowed t))))
    (and quota period (plusp quota) (plusp period) (/ quota period))))

(defun %split (string char)
  (loop for start = 0 then (1+ end)
        for end = (position char string :start start)
        collect (subseq string start end)
        while end))

(defun %file-lines (path)
  (with-open-file (in path :if-does-not-exist nil)
    (and in (loop for l = (read-line in nil) while l collect l))))

(defun %cgroup-cpu-mounts ()
  "Where this process's CPU limits can be read: (VERSION DIRECTORY MOUNT)
for its cgroup v2, and for the v1 hierarchy holding the cpu controller:
its own group's directory and the hierarchy's mount above it
(/proc/self/cgroup and /proc/self/mountinfo, as Go's runtime finds them)."
  (let ((groups (loop for line in (%file-lines "/proc/self/cgroup")
                      for (id controllers path) = (%split line #\:)
                      when (and path (string= id "0") (string= controllers ""))
                        collect (cons :v2 path)
                      when (and path (member "cpu" (%split controllers #\,) :test #'string=))
                        collect (cons :v1 path))))
    (loop for line in (%file-lines "/proc/self/mountinfo")
          for fields = (%split line #\Space)
          for tail = (member "-" fields :test #'string=)
          for root = (fourth fields)
          for mount = (fifth fields)
          for version = (cond ((equal (second tail) "cgroup2") :v2)
                              ((and (equal (second tail) "cgroup")
                                    (member "cpu" (%split (or (fourth tail) "") #\,) :test #'string=))
                               :v1))
          for path = (cdr (assoc version groups))
          when (and version path mount root
                    (or (string= root "/") (eql 0 (search root path))))
            collect (list version
                          (string-right-trim "/" (concatenate 'string (string-right-trim "/" mount)
                                                              (if (string= root "/") path (subseq path (length root)))))
                          (string-right-trim "/" mount)))))

(defun %group-cpu-limit (version dir)
  "The cores the cgroup at DIR allows itself (not its ancestors), or NIL."
  (ecase version
    (:v2 (%cpu-max-limit (%read-first-line (concatenate 'string dir "/cpu.max"))))
    (:v1 (let ((quota (ignore-errors (parse-integer (%read-first-line (concatenate 'string dir "/cpu.cfs_quota_us")))))
               (period (ignore-errors (parse-integer (%read-first-line (concatenate 'string dir "/cpu.cfs_period_us"))))))
           (and quota period (plusp quota) (plusp period) (/ quota period))))))

(defun cgroup-cpu-limit ()
  "The CPU limit, in cores, of this process's cgroups and their ancestors
(the least quota over its period among them, cgroup v2's cpu.max and the
v1 cpu controller's cfs_quota_us alike), or NIL if none is set or none can
be read."
  (ignore-errors
   (let ((limit nil))
     (loop for (version dir mount) in (%cgroup-cpu-mounts)
           ;; The group, then each ancestor up to the hierarchy's root.
           do (loop for d = dir then (subseq d 0 (position #\/ d :from-end t))
                    for cores = (%group-cpu-limit version d)
                    when (and cores (or (null limit) (< cores limit)))
                      do (setf limit cores)
                    while (> (length d) (length mount))))
     limit)))
