;;;; HTTP/2 frames (RFC 9113 section 4 and 6): the input is a sequence of
;;;; frames, read as the connection's read loop does, header then payload,
;;;; until one is incomplete.  HTTP2-ERROR is the documented rejection.

(in-package #:clgrpc.fuzz)

(defun run-frames (octets)
  (let ((pos 0) (end (length octets)))
    (loop
      (multiple-value-bind (frame next) (clgrpc.http2:decode-frame octets :start pos)
        (unless frame (return))
        (check (< pos next) "decode-frame did not advance from ~D" pos)
        (check (<= pos (clgrpc.http2:frame-data-start frame) (clgrpc.http2:frame-data-end frame) next end)
               "payload range [~D,~D) outside the frame [~D,~D)" (clgrpc.http2:frame-data-start frame)
               (clgrpc.http2:frame-data-end frame) pos next)
        (setf pos next)))))

(defun frame-seeds ()
  (flet ((frames (&rest writers)
           (with-obuf-contents (buf)
             (dolist (w writers) (funcall w buf))))
         (block-of (headers)
           (with-obuf-contents (buf)
             (clgrpc.hpack:encode-header-block (clgrpc.hpack:make-encoder) buf headers))))
    (let ((block (block-of '((":method" . "POST") (":path" . "/a.B/C") (":scheme" . "http")
                             ("content-type" . "application/grpc") ("te" . "trailers")))))
      (list
       (cons "settings" (frames (lambda (b) (clgrpc.http2:write-settings-frame
                                             b '((1 . 4096) (2 . 0) (3 . 100) (4 . 65535)
                                                 (5 . 16384) (6 . 8192))))
                                #'clgrpc.http2:write-settings-ack))
       (cons "headers-data" (frames (lambda (b) (clgrpc.http2:write-headers-frame b 1 block))
                                    (lambda (b) (clgrpc.http2:write-data-frame
                                                 b 1 (octets-from 0 0 0 0 2 8 1)
                                                 :end-stream t))))
       (cons "headers-padded-priority"
             (frames (lambda (b) (clgrpc.http2:write-headers-frame
                                   b 3 block :padding 7 :priority-dependency 1
                                             :priority-weight 200 :priority-exclusive t))))
       (cons "headers-continuation"
             (frames (lambda (b) (clgrpc.http2:write-header-block-frames b 5 block 8))))
       (cons "data-padded" (frames (lambda (b) (clgrpc.http2:write-data-frame
                                                b 1 (octets-from "hello") :padding 4))))
       (cons "control" (frames (lambda (b) (clgrpc.http2:write-ping-frame b 42))
                               (lambda (b) (clgrpc.http2:write-ping-frame b 42 :ack t))
                               (lambda (b) (clgrpc.http2:write-window-update-frame b 0 65535))
                               (lambda (b) (clgrpc.http2:write-window-update-frame b 1 1))
                               (lambda (b) (clgrpc.http2:write-rst-stream-frame b 1 8))
                               (lambda (b) (clgrpc.http2:write-priority-frame b 3 1 255 :exclusive t))
                               (lambda (b) (clgrpc.http2:write-goaway-frame
                                            b 7 2 (octets-from "debug")))))
       (cons "push-promise" (frames (lambda (b) (clgrpc.http2:write-push-promise-frame
                                                 b 1 2 block :padding 3))))
       ;; An unknown type, which is to be ignored (4.1).
       (cons "unknown-type" (octets-from 0 0 3 #xfa #xff 0 0 0 1 1 2 3))))))

(define-target "http2-frame"
  :files '((:clgrpc . "src/http2/frame-header.lisp")
           (:clgrpc . "src/http2/settings.lisp")
           (:clgrpc . "src/http2/frame-decode.lisp"))
  :run #'run-frames
  :expected '(clgrpc.http2:http2-error)
  :seeds #'frame-seeds
  :max-length 1024
  ;; Frame headers of each type, flag combinations and stream 0 vs 1.
  :tokens (append
           (loop for type below 11
                 collect (octets-from 0 0 8 type 0 0 0 0 1)
                 collect (octets-from 0 0 5 type #x2d 0 0 0 0))
           (list (octets-from 0 4 0 0 1 0 0 0 1) (octets-from #x80 0 0 0))))
