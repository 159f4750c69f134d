;;;; SETTINGS parameter validation (RFC 9113 section 6.5.2).
;;;;
;;;; Kept apart from frame decoding because the connection also validates
;;;; settings it is asked to send, and because the value rules (which error
;;;; code for which parameter) are the part most often got wrong.

(in-package #:clgrpc.http2)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(defun validate-setting (id value)
  "Signal the connection error section 6.5.2 prescribes for a bad VALUE of
setting ID.  Unknown identifiers are accepted (they must be ignored)."
  (declare (type (unsigned-byte 16) id) (type (unsigned-byte 32) value))
  (case id
    (#.+settings-enable-push+
     (unless (<= value 1)
       (connection-error +protocol-error+ "SETTINGS_ENABLE_PUSH must be 0 or 1, got ~D" value)))
    (#.+settings-initial-window-size+
     (unless (<= value +max-window-size+)
       (connection-error +flow-control-error+
                         "SETTINGS_INITIAL_WINDOW_SIZE ~D exceeds 2^31-1" value)))
    (#.+settings-max-frame-size+
     (unless (<= +default-max-frame-size+ value +max-allowed-frame-size+)
       (connection-error +protocol-error+
                         "SETTINGS_MAX_FRAME_SIZE ~D outside [16384, 16777215]" value))))
  value)
