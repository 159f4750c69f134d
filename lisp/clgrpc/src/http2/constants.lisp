;;;; HTTP/2 frame types, flags, settings identifiers and protocol limits
;;;; (RFC 9113 sections 3.4, 4, 6 and 6.5.2).

(in-package #:clgrpc.http2)

;;; Frame types (section 6)
(defconstant +frame-data+ #x0)
(defconstant +frame-headers+ #x1)
(defconstant +frame-priority+ #x2)
(defconstant +frame-rst-stream+ #x3)
(defconstant +frame-settings+ #x4)
(defconstant +frame-push-promise+ #x5)
(defconstant +frame-ping+ #x6)
(defconstant +frame-goaway+ #x7)
(defconstant +frame-window-update+ #x8)
(defconstant +frame-continuation+ #x9)

(defun frame-type-name (type)
  (case type
    (#.+frame-data+ "DATA") (#.+frame-headers+ "HEADERS") (#.+frame-priority+ "PRIORITY")
    (#.+frame-rst-stream+ "RST_STREAM") (#.+frame-settings+ "SETTINGS")
    (#.+frame-push-promise+ "PUSH_PROMISE") (#.+frame-ping+ "PING")
    (#.+frame-goaway+ "GOAWAY") (#.+frame-window-update+ "WINDOW_UPDATE")
    (#.+frame-continuation+ "CONTINUATION")
    (t (format nil "UNKNOWN_0x~X" type))))

;;; Flags.  The same bit means different things per frame type: 0x1 is
;;; END_STREAM on DATA/HEADERS and ACK on SETTINGS/PING.
(defconstant +flag-end-stream+ #x1)
(defconstant +flag-ack+ #x1)
(defconstant +flag-end-headers+ #x4)
(defconstant +flag-padded+ #x8)
(defconstant +flag-priority+ #x20)

;;; SETTINGS identifiers (section 6.5.2)
(defconstant +settings-header-table-size+ #x1)
(defconstant +settings-enable-push+ #x2)
(defconstant +settings-max-concurrent-streams+ #x3)
(defconstant +settings-initial-window-size+ #x4)
(defconstant +settings-max-frame-size+ #x5)
(defconstant +settings-max-header-list-size+ #x6)

;;; Sizes and limits
(defconstant +frame-header-length+ 9)
(defconstant +default-max-frame-size+ 16384 "Initial SETTINGS_MAX_FRAME_SIZE (2^14).")
(defconstant +max-allowed-frame-size+ 16777215 "Largest SETTINGS_MAX_FRAME_SIZE (2^24-1).")
(defconstant +max-window-size+ 2147483647 "Largest flow-control window (2^31-1).")
(defconstant +default-window-size+ 65535 "Initial flow-control window.")

(defparameter +connection-preface+
  (map '(simple-array (unsigned-byte 8) (*)) #'char-code
       (format nil "PRI * HTTP/2.0~C~C~C~CSM~C~C~C~C"
               #\Return #\Newline #\Return #\Newline #\Return #\Newline #\Return #\Newline))
  "The client connection preface (section 3.4), as octets.")
