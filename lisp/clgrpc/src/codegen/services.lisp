;;;; gRPC service code from a FileDescriptorSet: client stubs calling the
;;;; four kinds of method with the generated codecs, and a function
;;;; registering handlers on a server.  Needs the message definitions
;;;; (DEFINE-MESSAGES-FROM-DESCRIPTOR-SET) in the same package.
;;;;
;;;; For service routeguide.RouteGuide:
;;;;   (route-guide-get-feature channel point &key timeout metadata compress) => feature
;;;;   (route-guide-list-features channel rectangle &key ...) => call (CALL-RECV)
;;;;   (route-guide-record-route channel &key ...) => call (CALL-SEND, CALL-CLOSE-AND-RECV)
;;;;   (route-guide-route-chat channel &key ...) => call (CALL-SEND, CALL-RECV)
;;;;   (register-route-guide server :get-feature fn :list-features fn ...)
;;;;
;;;; Registering a service also gives the server its proto file and the
;;;; files that file imports (those in the set), as serialized
;;;; FileDescriptorProtos, for server reflection.

(in-package #:clgrpc.codegen)

(defun method-kind (m)
  (cond ((and (method-descriptor-client-streaming-p m) (method-descriptor-server-streaming-p m))
         :bidi)
        ((method-descriptor-client-streaming-p m) :client-streaming)
        ((method-descriptor-server-streaming-p m) :server-streaming)
        (t :unary)))

(defun descriptor-closure (file files)
  "FILE and the files it imports, directly or not, that FILES holds, as
(name . serialized FileDescriptorProto), imports first."
  (let ((seen '()))
    (labels ((visit (f)
               (unless (find (file-descriptor-name f) seen :key #'car :test #'string=)
                 (dolist (dep (file-descriptor-dependencies f))
                   (let ((d (find dep files :key #'file-descriptor-name :test #'string=)))
                     (when d (visit d))))
                 (push (cons (file-descriptor-name f) (file-descriptor-octets f)) seen))))
      (visit file))
    (reverse seen)))

(defun service-definitions (gen service package-name descriptors)
  (let* ((base (type-base-name (service-descriptor-full-name service) package-name))
         (methods (service-descriptor-methods service)))
    `(,@(loop for m in methods
              for stub = (sym gen base "-" (lisp-name (method-descriptor-name m)))
              for path = (method-descriptor-path m)
              for encoder = `#',(encoder-symbol gen (method-descriptor-input-type m))
              for decoder = `#',(decoder-symbol gen (method-descriptor-output-type m))
              collect
              (ecase (method-kind m)
                (:unary
                 `(defun ,stub (channel request &key timeout metadata compress)
                    ,(format nil "Call ~A; returns the response (and the call)." path)
                    (clgrpc.grpc:unary-call channel ,path request :encoder ,encoder :decoder ,decoder
                                                                  :timeout timeout :metadata metadata
                                     :compress compress)))
                (:server-streaming
                 `(defun ,stub (channel request &key timeout metadata compress)
                    ,(format nil "Start ~A; read the responses with CALL-RECV." path)
                    (clgrpc.grpc:server-streaming-call channel ,path request
                                                       :encoder ,encoder :decoder ,decoder
                                                       :timeout timeout :metadata metadata
                                     :compress compress)))
                (:client-streaming
                 `(defun ,stub (channel &key timeout metadata compress)
                    ,(format nil "Start ~A; CALL-SEND requests, then CALL-CLOSE-AND-RECV." path)
                    (clgrpc.grpc:client-streaming-call channel ,path
                                                       :encoder ,encoder :decoder ,decoder
                                                       :timeout timeout :metadata metadata
                                     :compress compress)))
                (:bidi
                 `(defun ,stub (channel &key timeout metadata compress)
                    ,(format nil "Start ~A; CALL-SEND, CALL-RECV, CALL-CLOSE-SEND." path)
                    (clgrpc.grpc:bidi-streaming-call channel ,path
                                                     :encoder ,encoder :decoder ,decoder
                                                     :timeout timeout :metadata metadata
                                     :compress compress)))))
      (defun ,(sym gen "REGISTER-" base) (server &key ,@(loop for m in methods
                                                               collect (sym gen (lisp-name (method-descriptor-name m))))
                                                  ,(sym gen "INLINE") ,(sym gen "EACH-MESSAGE"))
        ,(format nil "Register handlers for ~A on SERVER; a method given no handler stays
UNIMPLEMENTED.  INLINE lists the methods, by keyword (~{:~(~A~)~^, ~}), whose
handlers never block and take microseconds, to run on the reactor;
EACH-MESSAGE the bidi and client-streaming methods whose handlers are
called per message.  See
CLGRPC.GRPC:REGISTER-METHOD for the handler signatures, :INLINE and
:EACH-MESSAGE."
                 (service-descriptor-full-name service)
                 (loop for m in methods collect (lisp-name (method-descriptor-name m))))
        ;; A name that is not one of the service's streaming-request
        ;; methods would register a handler called with the wrong arity.
        (let ((unknown (set-difference ,(sym gen "EACH-MESSAGE")
                                       ',(loop for m in methods
                                               when (member (method-kind m)
                                                            '(:bidi :client-streaming))
                                                 collect (intern (lisp-name (method-descriptor-name m))
                                                                 :keyword)))))
          (when unknown
            (error "~S ~:[are~;is~] not among ~A's bidi and client-streaming methods" unknown
                   (null (rest unknown)) ,(service-descriptor-full-name service))))
        ,@(loop for m in methods
                for var = (sym gen (lisp-name (method-descriptor-name m)))
                collect `(when ,var
                           (clgrpc.grpc:register-method
                            server ,(method-descriptor-path m) ,var
                            :kind ,(method-kind m)
                            :inline (and (member ,(intern (lisp-name (method-descriptor-name m)) :keyword)
                                                 ,(sym gen "INLINE"))
                                         t)
                            ,@(when (member (method-kind m) '(:bidi :client-streaming))
                                `(:each-message
                                  (and (member ,(intern (lisp-name (method-descriptor-name m)) :keyword)
                                               ,(sym gen "EACH-MESSAGE"))
                                       t)))
                            :request-decoder #',(decoder-symbol gen (method-descriptor-input-type m))
                            :response-encoder #',(encoder-symbol gen (method-descriptor-output-type m)))))
        (clgrpc.grpc:register-service-descriptors server ,(service-descriptor-full-name service)
                                                  ',descriptors)
        server))))

(defun service-definitions-form (files &key (package *package*) only-files export)
  "Stubs and registration functions for the services of FILES, exported
from PACKAGE if EXPORT."
  (let* ((gen (make-gen files package))
         (definitions
           (loop for file in files
                 when (or (null only-files)
                          (member (file-descriptor-name file) only-files :test #'string=))
                   append (loop with descriptors = (descriptor-closure file files)
                                for s in (file-descriptor-services file)
                                append (service-definitions gen s (file-descriptor-package file)
                                                            descriptors))))
         (names (loop for d in definitions when (eq (first d) 'defun) collect (second d))))
    `(progn
       ,@(when (and export names) (list (export-form names)))
       ,@definitions)))

(defmacro define-services-from-descriptor-set (path &key package only-files export)
  "Client stubs and server registration for the services of the descriptor
set at PATH (see DEFINE-MESSAGES-FROM-DESCRIPTOR-SET)."
  (service-definitions-form (load-file-descriptor-set (resolve-descriptor-path path))
                            :package (or package *package*)
                            :only-files only-files :export export))
