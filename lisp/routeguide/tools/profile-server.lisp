;;;; The RouteGuide server under sb-sprof, for finding where its CPU time
;;;; (or its allocation) goes while a load generator drives it.
;;;;
;;;;   sbcl --script lisp/routeguide/tools/profile-server.lisp OUT MODE SECONDS [-addr HOST:PORT]
;;;;
;;;; Loads the "routeguide/server" system with ASDF (from this checkout), serves on
;;;; HOST:PORT (default 127.0.0.1:0: a free port) and prints "listening on
;;;; HOST:PORT" like the server program, whose -addr flag it takes, so that
;;;; the load generator can start it as it starts that program.  With no
;;;; arguments it only loads (compiles) the system, and exits.  It profiles every thread in MODE
;;;; (cpu or alloc) once the connections are up, for SECONDS or until
;;;; SIGTERM/SIGINT, whichever comes first, then writes OUT (flat report)
;;;; and OUT.graph (call graph), and serves on until SIGTERM/SIGINT.  profile-server.sh drives it with
;;;; the Go load generator.  Profiling starts under load, not at startup, so
;;;; loading and idling do not dilute the percentages.

(require :asdf)
(require :sb-sprof)

(defvar *here* (make-pathname :name nil :type nil :defaults *load-truename*))

(asdf:load-asd (merge-pathnames "../../clgrpc/clgrpc.asd" *here*))
(asdf:load-asd (merge-pathnames "../../cmdline/cmdline.asd" *here*))
(asdf:load-asd (merge-pathnames "../../cpus/cpus.asd" *here*))
(asdf:load-asd (merge-pathnames "../routeguide.asd" *here*))
;; Compile quietly: the report is the output that matters.
(let ((*compile-verbose* nil) (*compile-print* nil))
  (handler-bind ((warning #'muffle-warning))
    (asdf:load-system "routeguide/server")))

(defvar *stop* nil)

(defun parse-addr (addr)
  "HOST and PORT of ADDR, \"HOST:PORT\"."
  (let ((colon (position #\: addr :from-end t)))
    (unless colon
      (error "-addr ~S is not HOST:PORT" addr))
    (values (subseq addr 0 colon) (parse-integer addr :start (1+ colon)))))

(defun main (args)
  (unless args
    (sb-ext:exit :code 0))
  (destructuring-bind (out mode seconds &optional (flag "-addr") (addr "127.0.0.1:0")) args
    (unless (string= flag "-addr")
      (error "unknown argument ~S; usage: OUT MODE SECONDS [-addr HOST:PORT]" flag))
    (let ((mode (intern (string-upcase mode) :keyword))
          (seconds (parse-integer seconds)))
      (check-type mode (member :cpu :alloc))
      ;; At SBCL's default GC settings, as the server program runs.
      (multiple-value-bind (server port)
          (multiple-value-bind (host port) (parse-addr addr)
            (routeguide.server:start-server :host host :port port))
        (flet ((request-stop (signal info context)
                 (declare (ignore signal info context))
                 (setf *stop* t)))
          (sb-sys:enable-interrupt sb-unix:sigint #'request-stop)
          (sb-sys:enable-interrupt sb-unix:sigterm #'request-stop))
        (format t "listening on ~A:~D~%" (parse-addr addr) port)
        (finish-output)
        ;; Start once the load generator's connections are all up: SBCL
        ;; 2.2.9 can crash (SIGSEGV) when a profiling signal hits a thread
        ;; that is being created, and every connection starts two threads.
        (loop with last = -1 and stable = 0
              until (or *stop* (>= stable 10))
              do (sleep 0.05)
                 (let ((n (clgrpc.grpc::server-connection-count server)))
                   (if (and (plusp n) (= n last)) (incf stable) (setf stable 0 last n))))
        (let ((gc-before sb-ext:*gc-run-time*)
              (start (get-internal-real-time)))
          (sb-sprof:start-profiling :max-samples 200000 :mode mode :threads :all
                                    :sample-interval 0.001)
          (loop with end = (+ start (* seconds internal-time-units-per-second))
                until (or *stop* (>= (get-internal-real-time) end))
                do (sleep 0.05))
          (sb-sprof:stop-profiling)
          (with-open-file (s out :direction :output :if-exists :supersede)
            (format s "mode ~(~A~), ~,1F s profiled, GC run time ~,3F s~%~%"
                    mode (/ (- (get-internal-real-time) start) internal-time-units-per-second)
                    (/ (- sb-ext:*gc-run-time* gc-before) internal-time-units-per-second))
            (sb-sprof:report :type :flat :max 60 :stream s))
          (with-open-file (s (concatenate 'string out ".graph") :direction :output
                                                                 :if-exists :supersede)
            (sb-sprof:report :type :graph :max 60 :stream s)))
        (format *error-output* "profile written to ~A~%" out)
        (finish-output *error-output*)
        ;; Serve on until told to stop, so the load generator's last calls
        ;; do not fail.
        (loop until *stop* do (sleep 0.05))
        (sb-ext:exit :code 0 :abort t)))))

(main (rest sb-ext:*posix-argv*))
