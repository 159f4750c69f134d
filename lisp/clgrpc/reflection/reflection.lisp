;;;; gRPC server reflection for clgrpc servers, grpc.reflection.v1 and the
;;;; older grpc.reflection.v1alpha that many tools still speak: what lets
;;;; grpcurl, Postman or Evans list, describe and call a server's services
;;;; without its .proto files.
;;;;
;;;;   (clgrpc.reflection:register-reflection server)
;;;;
;;;; It answers from what the generated registration functions recorded
;;;; (CLGRPC.GRPC:REGISTER-SERVICE-DESCRIPTORS): each service's proto file
;;;; and the files it imports, serialized as protoc wrote them.  Extensions
;;;; are not supported by clgrpc, so extension queries get NOT_FOUND, as
;;;; grpc-go answers for a type without extensions.

(defpackage #:clgrpc.reflection
  (:use #:cl)
  (:documentation "gRPC server reflection (grpc.reflection.v1 and v1alpha) for a clgrpc server.")
  (:export #:register-reflection))

(in-package #:clgrpc.reflection)

(defun file-symbols (file)
  "The fully qualified names FILE defines: messages and enums (nested ones
too), services and their methods."
  (let ((names '()))
    (labels ((enum (e) (push (clgrpc.descriptor:enum-descriptor-full-name e) names))
             (message (m)
               (push (clgrpc.descriptor:message-descriptor-full-name m) names)
               (mapc #'message (clgrpc.descriptor:message-descriptor-nested-messages m))
               (mapc #'enum (clgrpc.descriptor:message-descriptor-enums m))))
      (mapc #'message (clgrpc.descriptor:file-descriptor-messages file))
      (mapc #'enum (clgrpc.descriptor:file-descriptor-enums file))
      (dolist (s (clgrpc.descriptor:file-descriptor-services file))
        (let ((service (clgrpc.descriptor:service-descriptor-full-name s)))
          (push service names)
          (dolist (m (clgrpc.descriptor:service-descriptor-methods s))
            (push (concatenate 'string service "." (clgrpc.descriptor:method-descriptor-name m))
                  names)))))
    names))

(defstruct (index (:constructor %make-index))
  (files (make-hash-table :test 'equal))     ; file name -> serialized descriptor
  (imports (make-hash-table :test 'equal))   ; file name -> names of the files it imports
  (symbols (make-hash-table :test 'equal)))  ; fully qualified name -> file name

(defun make-index (server)
  "What SERVER's services registered, indexed for the queries."
  (let ((index (%make-index)))
    (loop for (name . octets) in (clgrpc.grpc:server-file-descriptors server)
          for file = (clgrpc.descriptor:read-file-descriptor octets)
          do (setf (gethash name (index-files index)) octets
                   (gethash name (index-imports index))
                   (clgrpc.descriptor:file-descriptor-dependencies file))
             (dolist (symbol (file-symbols file))
               (setf (gethash symbol (index-symbols index)) name)))
    index))

(defun file-with-imports (index name)
  "The serialized descriptors of file NAME and of every file it imports,
NAME first, as grpc-go sends them (the client may already know the rest,
but it cannot say so)."
  (let ((seen '()))
    (labels ((visit (n)
               (when (and (not (member n seen :test #'string=)) (gethash n (index-files index)))
                 (push n seen)
                 (mapc #'visit (gethash n (index-imports index))))))
      (visit name))
    (mapcar (lambda (n) (gethash n (index-files index))) (reverse seen))))

(defun answer (index server request)
  "One query's answer: (:files octets-list), (:services names) or (:error code message)."
  (destructuring-bind (kind . argument) request
    (flet ((not-found (what)
             (list :error clgrpc.grpc:+not-found+ (format nil "~A not found" what))))
      (ecase kind
        (:file-by-filename
         (if (gethash argument (index-files index))
             (list :files (file-with-imports index argument))
             (not-found (format nil "file ~S" argument))))
        (:file-containing-symbol
         (let ((file (gethash (string-left-trim "." argument) (index-symbols index))))
           (if file
               (list :files (file-with-imports index file))
               (not-found (format nil "symbol ~S" argument)))))
        ((:file-containing-extension :all-extension-numbers-of-type)
         (not-found "extensions"))
        (:list-services
         (list :services (clgrpc.grpc:server-service-names server)))
        (:none
         (list :error clgrpc.grpc:+invalid-argument+ "the request names no query"))))))

(defmacro define-reflection-handler (name package)
  "Define NAME, the ServerReflectionInfo handler for the messages of
PACKAGE (the generated package of one version of reflection.proto): every
version has the same messages under its own names."
  (flet ((s (&rest parts) (intern (format nil "~{~A~}" parts) package)))
    `(defun ,name (server call)
       (let ((index (make-index server)))
         (loop for request = (clgrpc.grpc:call-recv call)
               while request
               do (let* ((query
                           (cond ((,(s "SERVER-REFLECTION-REQUEST-FILE-BY-FILENAME") request)
                                  (cons :file-by-filename
                                        (,(s "SERVER-REFLECTION-REQUEST-FILE-BY-FILENAME") request)))
                                 ((,(s "SERVER-REFLECTION-REQUEST-FILE-CONTAINING-SYMBOL") request)
                                  (cons :file-containing-symbol
                                        (,(s "SERVER-REFLECTION-REQUEST-FILE-CONTAINING-SYMBOL") request)))
                                 ((,(s "SERVER-REFLECTION-REQUEST-FILE-CONTAINING-EXTENSION") request)
                                  (cons :file-containing-extension nil))
                                 ((,(s "SERVER-REFLECTION-REQUEST-ALL-EXTENSION-NUMBERS-OF-TYPE") request)
                                  (cons :all-extension-numbers-of-type nil))
                                 ((,(s "SERVER-REFLECTION-REQUEST-LIST-SERVICES") request)
                                  (cons :list-services nil))
                                 (t (cons :none nil))))
                         (result (answer index server query))
                         (response
                           (,(s "MAKE-SERVER-REFLECTION-RESPONSE")
                            :valid-host (,(s "SERVER-REFLECTION-REQUEST-HOST") request)
                            :original-request request)))
                    (ecase (first result)
                      (:files
                       (setf (,(s "SERVER-REFLECTION-RESPONSE-FILE-DESCRIPTOR-RESPONSE") response)
                             (,(s "MAKE-FILE-DESCRIPTOR-RESPONSE")
                              :file-descriptor-proto (second result))))
                      (:services
                       (setf (,(s "SERVER-REFLECTION-RESPONSE-LIST-SERVICES-RESPONSE") response)
                             (,(s "MAKE-LIST-SERVICE-RESPONSE")
                              :service (mapcar (lambda (n) (,(s "MAKE-SERVICE-RESPONSE") :name n))
                                               (second result)))))
                      (:error
                       (setf (,(s "SERVER-REFLECTION-RESPONSE-ERROR-RESPONSE") response)
                             (,(s "MAKE-ERROR-RESPONSE") :error-code (second result)
                                                         :error-message (third result)))))
                    (clgrpc.grpc:call-send call response)))))))

(define-reflection-handler reflection-v1 "CLGRPC.REFLECTION.V1.PROTO")
(define-reflection-handler reflection-v1alpha "CLGRPC.REFLECTION.V1ALPHA.PROTO")

(defun register-reflection (server)
  "Serve grpc.reflection.v1 and v1alpha on SERVER.  Register it after the
services it is to describe or before: it looks them up on each call."
  (clgrpc.reflection.v1.proto:register-server-reflection
   server :server-reflection-info (lambda (call) (reflection-v1 server call)))
  (clgrpc.reflection.v1alpha.proto:register-server-reflection
   server :server-reflection-info (lambda (call) (reflection-v1alpha server call)))
  server)
