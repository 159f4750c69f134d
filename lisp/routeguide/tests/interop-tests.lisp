;;;; Interop with the Go RouteGuide (go/routeguide, on grpc-go):
;;;;  - our client against the Go server, all four RPCs plus errors,
;;;;    deadlines, cancellation and concurrent calls;
;;;;  - the Go client against our server, all four RPCs, its report compared
;;;;    line for line with the Go client's report on the Go server;
;;;;  - our client program against the Go server, its report compared line
;;;;    for line with the Go client's, and its command line.
;;;; Everything on 127.0.0.1 with bounded timeouts.  The Go programs come
;;;; from ROUTEGUIDE_GO_SERVER and ROUTEGUIDE_GO_CLIENT (Bazel passes its
;;;; builds; by default /tmp/rg/server and /tmp/rg/client, from
;;;; `go build -o /tmp/rg/ ./go/routeguide/server ./go/routeguide/client`);
;;;; without them the tests are skipped.

(defpackage #:routeguide.tests
  (:use #:cl #:fiveam #:routeguide.proto)
  (:export #:run-tests-or-fail))

(in-package #:routeguide.tests)

(def-suite :routeguide-interop :description "clgrpc and grpc-go RouteGuide interop.")
(in-suite :routeguide-interop)

(defun go-program (variable default)
  (let ((path (or (sb-ext:posix-getenv variable) default)))
    (and path (probe-file path) (namestring (truename path)))))

(defun go-server () (go-program "ROUTEGUIDE_GO_SERVER" "/tmp/rg/server"))
(defun go-client () (go-program "ROUTEGUIDE_GO_CLIENT" "/tmp/rg/client"))
;; The Lisp client program: Bazel passes its build; under ASDF, set it to
;; an executable made from routeguide.client-main:client-main.
(defun lisp-client () (go-program "ROUTEGUIDE_LISP_CLIENT" nil))

(defun call-with-timeout (seconds thunk)
  "THUNK's value, or :TIMEOUT after SECONDS (the thread is left behind)."
  (let ((thread (sb-thread:make-thread thunk :name "interop timeout")))
    (let ((result (sb-thread:join-thread thread :default :timeout :timeout seconds)))
      result)))

(defun stop-process (process)
  "Ask PROCESS to stop (SIGTERM), kill it if it does not within 5 s."
  (when (sb-ext:process-alive-p process)
    (sb-ext:process-kill process sb-unix:sigterm)
    (loop repeat 100 while (sb-ext:process-alive-p process) do (sleep 0.05))
    (when (sb-ext:process-alive-p process)
      (sb-ext:process-kill process sb-unix:sigkill)))
  (sb-ext:process-wait process)
  (sb-ext:process-close process))

(defun call-with-go-server (fn)
  "Start the Go server on a free port, call FN with the port, stop it."
  (let ((process (sb-ext:run-program (go-server) '("-addr" "127.0.0.1:0")
                                     :output :stream :error nil :wait nil)))
    (unwind-protect
         (let ((line (call-with-timeout 10 (lambda () (read-line (sb-ext:process-output process)
                                                                 nil "")))))
           (unless (and (stringp line) (search "listening on 127.0.0.1:" line))
             (error "Go server did not start: ~S" line))
           (funcall fn (parse-integer line :start (1+ (position #\: line :from-end t)))))
      (stop-process process))))

(defmacro with-go-server ((port) &body body)
  `(call-with-go-server (lambda (,port) ,@body)))

(defvar *output-counter* (list 0))

(defun sb-posix-getpid ()
  (sb-alien:alien-funcall (sb-alien:extern-alien "getpid" (function sb-alien:int))))

(defun next-counter ()
  (sb-ext:atomic-incf (car *output-counter*)))

(defun run-go-client (args &key (timeout 60))
  "Run the Go client; returns (values exit-code output)."
  (run-client-program (go-client) args :timeout timeout))

(defun run-client-program (program args &key (timeout 60))
  "Run PROGRAM with ARGS; returns (values exit-code output), stdout and
stderr together.  Output goes through a file: copying a pipe into a Lisp
stream needs the creating thread to serve events, and we wait elsewhere."
  (let ((file (format nil "~A/clgrpc-interop-~D-~D.out"
                      (or (sb-ext:posix-getenv "TEST_TMPDIR") "/tmp")
                      (sb-posix-getpid) (next-counter))))
    (unwind-protect
         (let ((process (sb-ext:run-program program args :output file :error :output
                                                              :if-output-exists :supersede
                                                              :wait nil)))
           (loop with deadline = (+ (get-internal-real-time) (* timeout internal-time-units-per-second))
                 while (and (sb-ext:process-alive-p process)
                            (< (get-internal-real-time) deadline))
                 do (sleep 0.02))
           (let ((timed-out (sb-ext:process-alive-p process)))
             (stop-process process)
             (let ((output (with-open-file (in file :external-format :utf-8)
                             (let ((text (make-string (file-length in))))
                               (subseq text 0 (read-sequence text in))))))
               (values (if timed-out :timeout (sb-ext:process-exit-code process)) output))))
      (ignore-errors (delete-file file)))))

(defmacro with-channel ((var port) &body body)
  `(let ((,var (clgrpc.grpc:make-channel "127.0.0.1" ,port)))
     (unwind-protect (progn ,@body)
       (clgrpc.grpc:channel-close ,var))))

(defun status-of (thunk)
  (handler-case (progn (funcall thunk) :ok)
    (clgrpc.grpc:grpc-error (e)
      (list (clgrpc.grpc:status-code-name (clgrpc.grpc:grpc-error-code e))
            (clgrpc.grpc:grpc-error-message e)))))

(defun pt (latitude longitude) (make-point :latitude latitude :longitude longitude))

(defparameter *demo-area*
  (make-rectangle :lo (pt 400000000 -750000000) :hi (pt 420000000 -730000000)))

(defun demo-notes ()
  (loop for (lng msg) in '((1 "First message") (2 "Second message") (3 "Third message")
                           (1 "Fourth message") (2 "Fifth message") (3 "Sixth message"))
        collect (make-route-note :location (pt 0 lng) :message msg)))

(defmacro interop-test (name &body body)
  `(test ,name
     (if (and (go-server) (go-client))
         (progn ,@body)
         (skip "Go RouteGuide programs not found (set ROUTEGUIDE_GO_SERVER and ROUTEGUIDE_GO_CLIENT)"))))

;;; ------------------------------------------------------------------
;;; Lisp client -> Go server

(interop-test lisp-client-unary
  (with-go-server (port)
    (with-channel (ch port)
      (let ((f (route-guide-get-feature ch (pt 409146138 -746188906) :timeout 10)))
        (is (string= "Berkshire Valley Management Area Trail, Jefferson, NJ, USA" (feature-name f)))
        (is (equalp (pt 409146138 -746188906) (feature-location f))))
      (let ((f (route-guide-get-feature ch (pt 0 0) :timeout 10)))
        (is (string= "" (feature-name f)))
        (is (equalp (pt 0 0) (feature-location f))))
      (is (equal '("INVALID_ARGUMENT"
                   "point: latitude 999999999 out of range [-900000000, 900000000] (E7 degrees)")
                 (status-of (lambda () (route-guide-get-feature ch (pt 999999999 0) :timeout 10)))))
      (is (equal '("UNIMPLEMENTED" "unknown method Nope for service routeguide.RouteGuide")
                 (status-of (lambda () (clgrpc.grpc:unary-call ch "/routeguide.RouteGuide/Nope"
                                                               (clgrpc.octets:octets-of) :timeout 10)))))
      (is (equal "DEADLINE_EXCEEDED"
                 (first (status-of (lambda () (route-guide-get-feature ch (pt 1 1) :timeout 1/1000000)))))))))

(interop-test lisp-client-server-streaming
  (with-go-server (port)
    (with-channel (ch port)
      (let* ((call (route-guide-list-features ch *demo-area* :timeout 10))
             (features (loop for f = (clgrpc.grpc:call-recv call) while f collect f))
             (expected (loop for f across (routeguide:feature-db-features (routeguide:default-features))
                             when (let ((p (feature-location f)))
                                    (and (<= 400000000 (point-latitude p) 420000000)
                                         (<= -750000000 (point-longitude p) -730000000)))
                               collect f)))
        (is (= 100 (length features)))
        (is (= 64 (count-if (lambda (f) (plusp (length (feature-name f)))) features)))
        (is (equalp expected features)))
      ;; cancelling a call that already completed changes nothing
      (let ((call (route-guide-list-features ch *demo-area* :timeout 10)))
        (is (clgrpc.grpc:call-recv call))
        (loop while (clgrpc.grpc:call-recv call))
        (clgrpc.grpc:call-cancel call)
        (is (null (clgrpc.grpc:call-recv call)))))))

(interop-test lisp-client-cancel
  (with-go-server (port)
    (with-channel (ch port)
      ;; The server waits for our notes, so the call is surely in progress.
      (let ((call (route-guide-route-chat ch :timeout 10)))
        (clgrpc.grpc:call-send call (make-route-note :location (pt 9 9) :message "x"))
        (clgrpc.grpc:call-cancel call)
        (is (equal "CANCELLED" (first (status-of (lambda () (clgrpc.grpc:call-recv call))))))
        (is (equal "CANCELLED" (first (status-of (lambda () (clgrpc.grpc:call-send call
                                                                                   (make-route-note))))))))
      ;; and the connection is still good
      (is (route-guide-get-feature ch (pt 0 0) :timeout 10)))))

(interop-test lisp-client-client-streaming
  (with-go-server (port)
    (with-channel (ch port)
      (let* ((features (routeguide:feature-db-features (routeguide:default-features)))
             (points (loop for i below 200 collect (feature-location (svref features (mod (* i 7) 100)))))
             (call (route-guide-record-route ch :timeout 10)))
        (dolist (p points) (clgrpc.grpc:call-send call p))
        (let ((summary (clgrpc.grpc:call-close-and-recv call)))
          (is (= 200 (route-summary-point-count summary)))
          (is (= 200 (route-summary-feature-count summary)))
          ;; the Go server's distance agrees with ours, computed the same way
          (is (= (loop for (a b) on points while b
                       sum (routeguide:distance-meters (point-latitude a) (point-longitude a)
                                                        (point-latitude b) (point-longitude b)))
                 (route-summary-distance summary)))))
      (let ((call (route-guide-record-route ch :timeout 10)))
        (clgrpc.grpc:call-send call (pt 0 1800000001))
        (is (equal '("INVALID_ARGUMENT"
                     "point: longitude 1800000001 out of range [-1800000000, 1800000000] (E7 degrees)")
                   (status-of (lambda () (clgrpc.grpc:call-close-and-recv call)))))))))

(interop-test lisp-client-bidi-streaming
  (with-go-server (port)
    (with-channel (ch port)
      (let ((call (route-guide-route-chat ch :timeout 10)))
        (dolist (n (demo-notes)) (clgrpc.grpc:call-send call n))
        (clgrpc.grpc:call-close-send call)
        (is (equal '("First message" "Second message" "Third message")
                   (loop for n = (clgrpc.grpc:call-recv call) while n collect (route-note-message n)))))
      ;; ping-pong: each note at a new place gets no echo, a second one gets the first
      (let ((call (route-guide-route-chat ch :timeout 10)))
        (dotimes (i 20)
          (clgrpc.grpc:call-send call (make-route-note :location (pt 7 i) :message "a"))
          (clgrpc.grpc:call-send call (make-route-note :location (pt 7 i) :message "b"))
          (is (equal "a" (route-note-message (clgrpc.grpc:call-recv call)))))
        (clgrpc.grpc:call-close-send call)
        (is (null (clgrpc.grpc:call-recv call)))))))

(interop-test lisp-client-concurrent-calls
  (with-go-server (port)
    (with-channel (ch port)
      (let ((threads (loop repeat 8
                           collect (sb-thread:make-thread
                                    (lambda ()
                                      (loop repeat 200
                                            always (string= "Berkshire Valley Management Area Trail, Jefferson, NJ, USA"
                                                            (feature-name (route-guide-get-feature
                                                                           ch (pt 409146138 -746188906)
                                                                           :timeout 10)))))))))
        (is (every (lambda (th) (eq t (sb-thread:join-thread th :default nil :timeout 60))) threads))))))

;;; ------------------------------------------------------------------
;;; Go client -> Lisp server

(defun call-with-lisp-server (fn &rest options)
  "Call FN with the port of a Lisp server started with START-SERVER's OPTIONS."
  (multiple-value-bind (server port) (apply #'routeguide.server:start-server options)
    (unwind-protect (funcall fn port)
      (clgrpc.grpc:server-stop server :grace 2))))

(defmacro with-lisp-server ((port &rest options) &body body)
  `(call-with-lisp-server (lambda (,port) ,@body) ,@options))

(defun go-report (port rpc &rest more)
  (multiple-value-bind (code output)
      (run-go-client (list* "-addr" (format nil "127.0.0.1:~D" port) "-rpc" rpc more))
    (is (eql 0 code) "Go client -rpc ~A exited with ~A:~%~A" rpc code output)
    output))

(interop-test go-client-all-rpcs
  ;; The reference: the Go client's report on a fresh Go server.
  (let ((expected (with-go-server (port) (go-report port "all"))))
    (is (search "100 features (64 named)" expected))
    (with-lisp-server (port)
      (is (string= expected (go-report port "all"))))))

(interop-test go-client-all-rpcs-unary-inline
  ;; The tuned server (-unary_inline: GetFeature on the reactor thread)
  ;; answers exactly as the default one.
  (let ((expected (with-go-server (port) (go-report port "all"))))
    (with-lisp-server (port :unary-inline t)
      (is (string= expected (go-report port "all"))))))

(interop-test go-client-each-rpc
  (dolist (rpc '("get" "list" "record" "chat"))
    (let ((expected (with-go-server (port) (go-report port rpc "-points" "500"))))
      (with-lisp-server (port)
        (is (string= expected (go-report port rpc "-points" "500")) "RPC ~A differs" rpc)))))

(interop-test go-clients-concurrently
  (with-lisp-server (port)
    (let ((threads (loop repeat 4
                         collect (sb-thread:make-thread
                                  (lambda ()
                                    (handler-case
                                        (run-go-client (list "-addr" (format nil "127.0.0.1:~D" port)
                                                             "-rpc" "all" "-points" "100"))
                                      (error (e) e)))))))
      (dolist (th threads)
        (is (eql 0 (sb-thread:join-thread th :default :timeout :timeout 120)))))))

;;; ------------------------------------------------------------------
;;; The Lisp client program -> Go server

(defmacro client-program-test (name &body body)
  `(test ,name
     (if (and (go-server) (go-client) (lisp-client))
         (progn ,@body)
         (skip "set ROUTEGUIDE_GO_SERVER, ROUTEGUIDE_GO_CLIENT and ROUTEGUIDE_LISP_CLIENT"))))

(defun client-report (program port &rest args)
  "PROGRAM's output against 127.0.0.1:PORT, which must exit 0."
  (multiple-value-bind (code output)
      (run-client-program program (list* "-addr" (format nil "127.0.0.1:~D" port) args))
    (is (eql 0 code) "~A ~{~A~^ ~} exited with ~A:~%~A" program args code output)
    output))

(client-program-test lisp-client-program-reports-like-go
  ;; Each report against a fresh Go server, since RouteChat's answers
  ;; depend on the notes stored before.  -points 500 makes RecordRoute
  ;; draw a long route from Go's seeded generator, which ours reproduces.
  (dolist (args '(("-rpc" "get") ("-rpc" "list") ("-rpc" "record" "-points" "500")
                  ("-rpc" "chat") ("-rpc" "all") ()))
    (let ((expected (with-go-server (port) (apply #'client-report (go-client) port args)))
          (got (with-go-server (port) (apply #'client-report (lisp-client) port args))))
      (is (plusp (length expected)))
      (is (string= expected got) "~{~A~^ ~}: the Go client said~%~A~%the Lisp client said~%~A"
          args expected got))))

(client-program-test lisp-client-program-serve
  ;; -serve: the Lisp server in the same process; the report after the
  ;; "in-process server listening on ..." line is the Go client's.
  (flet ((after-first-line (text) (subseq text (1+ (position #\Newline text)))))
    (multiple-value-bind (code output) (run-client-program (lisp-client) '("-serve" "-points" "50"))
      (is (eql 0 code) "~A" output)
      (is (eql 0 (search "in-process server listening on 127.0.0.1:" output)))
      (multiple-value-bind (go-code go-output) (run-go-client '("-serve" "-points" "50"))
        (is (eql 0 go-code))
        (is (string= (after-first-line go-output) (after-first-line output)))))))

(client-program-test lisp-client-program-command-line
  (flet ((check-usage-error (args message)
           (multiple-value-bind (code output) (run-client-program (lisp-client) args)
             (is (eql 2 code) "~{~A~^ ~}: exit ~A" args code)
             (is (search message output) "~{~A~^ ~}: ~S not in~%~A" args message output)
             (is (search "usage: client [flags]" output) "~{~A~^ ~}: no usage in~%~A" args output)
             (is (search "  -rpc string" output)))))
    (check-usage-error '("-bogus") "flag provided but not defined: -bogus")
    (check-usage-error '("-rpc" "nope") "-rpc \"nope\" is not one of all|get|list|record|chat")
    (check-usage-error '("-points" "x") "invalid value \"x\" for flag -points")
    (check-usage-error '("-points=-1") "-points must not be negative")
    (check-usage-error '("-timeout" "0s") "-timeout must be positive")
    (check-usage-error '("-serve" "-addr" "127.0.0.1:1") "-serve and -addr are mutually exclusive")
    (check-usage-error '("-addr") "flag needs an argument: -addr")
    (check-usage-error '("extra") "unexpected arguments"))
  (multiple-value-bind (code output) (run-client-program (lisp-client) '("-h"))
    (is (eql 0 code))
    (is (search "Calls the RouteGuide RPCs" output))
    (is (search "(default \"127.0.0.1:10000\")" output))
    (is (search "(default 10s)" output))))

(client-program-test lisp-client-program-fails-without-server
  ;; A port that just stopped listening: the first call fails, exit 1, and
  ;; the error names the server and the call, as the Go client's does.
  (let ((port (with-go-server (port) port)))
    (multiple-value-bind (code output)
        (run-client-program (lisp-client) (list "-addr" (format nil "127.0.0.1:~D" port)
                                                "-rpc" "get" "-timeout" "5s"))
      (is (eql 1 code) "exit ~A: ~A" code output)
      (is (search (format nil "routeguide client: server 127.0.0.1:~D: GetFeature (409146138, -746188906): rpc error: code = Unavailable"
                          port)
                  output)
          "~A" output))))

(defun run-tests-or-fail ()
  (let ((results (run :routeguide-interop)))
    (explain! results)
    (unless (results-status results)
      (error "routeguide interop tests failed"))))
