;;;; Compile every source file in a fresh SBCL with only its declared
;;;; dependencies loaded, the way a Bazel rule compiles one file per action,
;;;; and fail on any warning or style-warning.  Also documents the minimal
;;;; file-level dependency graph.
;;;;
;;;;   sbcl --script lisp/clgrpc/tools/compile-each.lisp
;;;;
;;;; Exits 0 when every file compiles cleanly, 1 otherwise.

(defparameter *files*
  ;; (file . direct dependencies), in a valid load order.
  '(("package")
    ("octets" "package")
    ("utf8" "octets")
    ("util/clock" "package")
    ("util/fifo" "package")
    ("util/worker-pool" "util/clock" "util/fifo")
    ("util/scheduler" "util/clock")
    ("net/socket" "octets")
    ("net/epoll" "net/socket")
    ("hpack/errors" "package")
    ("hpack/integer" "octets" "hpack/errors")
    ("hpack/huffman-codes" "package")
    ("hpack/huffman" "octets" "hpack/errors" "hpack/huffman-codes")
    ("hpack/static-table" "octets")
    ("hpack/dynamic-table" "hpack/static-table")
    ("hpack/decoder" "hpack/integer" "hpack/huffman" "hpack/dynamic-table")
    ("hpack/encoder" "hpack/integer" "hpack/huffman" "hpack/dynamic-table")
    ("protobuf/errors" "package")
    ("protobuf/encode" "utf8" "protobuf/errors")
    ("protobuf/decode" "protobuf/encode")
    ("protobuf/message" "protobuf/encode")
    ("http2/errors" "package")
    ("http2/constants" "package")
    ("http2/frame-header" "octets" "http2/errors" "http2/constants")
    ("http2/settings" "http2/errors" "http2/constants")
    ("http2/frame-encode" "http2/frame-header")
    ("http2/frame-decode" "http2/frame-header" "http2/settings")
    ("http2/stream" "http2/frame-header")
    ("http2/connection" "http2/stream" "http2/settings" "hpack/encoder" "hpack/decoder" "util/clock"
     "net/socket")
    ("http2/semantics" "package")
    ("http2/output" "http2/connection" "http2/frame-encode" "util/clock")
    ("http2/input" "http2/output" "http2/frame-decode" "http2/semantics")
    ("http2/reactor" "http2/input" "net/epoll")
    ("http2/lifecycle" "http2/reactor")
    ("grpc/status" "utf8" "http2/errors")
    ("grpc/timeout" "package")
    ("grpc/metadata" "grpc/status")
    ("grpc/compression" "grpc/status" "octets")
    ("grpc/call" "util/fifo" "util/clock" "octets")
    ("grpc/framing" "grpc/call" "grpc/status" "grpc/compression" "http2/output")
    ("grpc/call-ops" "grpc/framing")
    ("grpc/plain-http" "utf8" "http2/output")
    ("grpc/server" "grpc/call-ops" "grpc/metadata" "grpc/timeout" "grpc/plain-http"
     "util/worker-pool" "util/scheduler" "http2/lifecycle")
    ("grpc/client" "grpc/server")
    ("descriptor/model" "octets")
    ("descriptor/reader" "protobuf/decode" "descriptor/model")
    ("codegen/names" "package")
    ("codegen/messages" "codegen/names" "descriptor/reader" "protobuf/message")
    ("codegen/services" "codegen/messages")))

(defparameter *root*
  (merge-pathnames "../src/" (make-pathname :name nil :type nil :defaults *load-truename*)))
(defparameter *out* #p"/tmp/clgrpc-compile-each/")

(defun closure (file)
  "FILE's transitive dependencies in load order."
  (let ((seen '()))
    (labels ((visit (f) (dolist (d (cdr (assoc f *files* :test #'string=)))
                          (unless (member d seen :test #'string=)
                            (visit d)
                            (push d seen)))))
      (visit file))
    (remove-if-not (lambda (f) (member f seen :test #'string=)) (mapcar #'car *files*))))

(defparameter *libraries* '("chipz" "salza2")
  "Loaded through ASDF before every file: Debian's cl-chipz and cl-salza2.")

(defun fasl (file) (merge-pathnames (concatenate 'string (substitute #\_ #\/ file) ".fasl") *out*))
(defun src (file) (merge-pathnames (concatenate 'string file ".lisp") *root*))

(ensure-directories-exist *out*)
(defvar *failed* '())
(dolist (entry *files*)
  (let* ((file (car entry))
         (forms
           (format nil "(progn ~
              (let ((*standard-output* (make-broadcast-stream)) (*error-output* (make-broadcast-stream))) ~
                ~{(asdf:load-system ~S) ~}) ~
              ~{(load ~S) ~}~
              (handler-bind ((warning (lambda (c) (format *error-output* \"~~&WARNING: ~~A~~%\" c))))
                (multiple-value-bind (out warn fail) (compile-file ~S :output-file ~S)
                  (sb-ext:exit :code (if (and out (not warn) (not fail)) 0 1)))))"
                   *libraries* (mapcar (lambda (d) (namestring (fasl d))) (closure file))
                   (namestring (src file)) (namestring (fasl file))))
         (err (make-string-output-stream))
         (process (sb-ext:run-program "sbcl" (list "--non-interactive" "--no-userinit"
                                                   "--eval" "(require :asdf)" "--eval" forms)
                                      :search t :output nil :error err)))
    (let ((code (sb-ext:process-exit-code process)))
      (format t "~:[FAIL~;ok  ~] ~A~%" (zerop code) file)
      (unless (zerop code)
        (push file *failed*)
        (format t "~A~%" (get-output-stream-string err))))))
(format t "~D files, ~D failed~%" (length *files*) (length *failed*))
(sb-ext:exit :code (if *failed* 1 0))
