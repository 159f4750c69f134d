;;;; HTTP/2 frame payload decoders and validation (RFC 9113 section 6).
;;;;
;;;; Two levels:
;;;;  - DECODE-<TYPE>-PAYLOAD functions take the payload slice
;;;;    OCTETS[START,END) plus the header's flags and stream id, validate
;;;;    them and return the fields as multiple values, with data and header
;;;;    block fragments as index ranges into OCTETS (no copies, no conses).
;;;;    The connection's read loop dispatches on the type and calls these.
;;;;  - DECODE-FRAME parses a whole frame into a FRAME struct: convenient for
;;;;    tests, tools and cold paths.
;;;;
;;;; Violations signal HTTP2-ERROR with the code and connection/stream scope
;;;; the RFC prescribes for each case.  Unknown frame types are returned
;;;; uninterpreted (section 4.1 says to ignore them).

(in-package #:clgrpc.http2)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(declaim (inline require-stream require-no-stream))
(defun require-stream (type stream-id)
  (when (zerop stream-id)
    (connection-error +protocol-error+ "~A frame on stream 0" (frame-type-name type))))
(defun require-no-stream (type stream-id)
  (unless (zerop stream-id)
    (connection-error +protocol-error+ "~A frame on stream ~D" (frame-type-name type) stream-id)))

(defun strip-padding (type octets start end flags)
  "If PADDED is set, consume the Pad Length octet (6.1/6.2/6.6).
Returns (values content-start end-before-padding pad-length); the caller
checks that padding fits in what remains after its own fixed fields."
  (declare (type octets octets) (type index start end) (type octet flags))
  (if (logtest flags +flag-padded+)
      (progn
        (when (>= start end)
          (connection-error +frame-size-error+ "padded ~A frame without Pad Length"
                            (frame-type-name type)))
        (let ((pad (aref octets start)))
          (when (>= pad (- end start))
            (connection-error +protocol-error+
                              "~A padding ~D >= payload length ~D"
                              (frame-type-name type) pad (- end start)))
          (values (1+ start) (- end pad) pad)))
      (values start end 0)))

(defun decode-data-payload (octets start end flags stream-id)
  "DATA (6.1).  Returns (values data-start data-end pad-length).
Flow control counts the whole payload, padding included."
  (declare (type octets octets) (type index start end) (type octet flags)
           (type stream-id stream-id))
  (require-stream +frame-data+ stream-id)
  (strip-padding +frame-data+ octets start end flags))

(defun decode-headers-payload (octets start end flags stream-id)
  "HEADERS (6.2).  Returns (values block-start block-end exclusive dependency
weight); DEPENDENCY is NIL without the PRIORITY flag, WEIGHT is 1-256."
  (declare (type octets octets) (type index start end) (type octet flags)
           (type stream-id stream-id))
  (require-stream +frame-headers+ stream-id)
  (multiple-value-bind (s e) (strip-padding +frame-headers+ octets start end flags)
    (declare (type index s e))
    (if (logtest flags +flag-priority+)
        (progn
          (when (> (+ s 5) e)
            (if (> (+ s 5) end)
                (connection-error +frame-size-error+ "HEADERS too short for priority fields")
                (connection-error +protocol-error+ "HEADERS padding exceeds block")))
          (let* ((word (read-u32 octets s))
                 (dependency (logand word #x7fffffff)))
            (when (= dependency stream-id)
              ;; 5.3.1: a stream cannot depend on itself.
              (stream-error* stream-id +protocol-error+ "stream ~D depends on itself" stream-id))
            (values (+ s 5) e (logbitp 31 word) dependency (1+ (aref octets (+ s 4))))))
        (values s e nil nil 16))))

(defun decode-priority-payload (octets start end stream-id)
  "PRIORITY (6.3).  Returns (values exclusive dependency weight)."
  (declare (type octets octets) (type index start end) (type stream-id stream-id))
  (require-stream +frame-priority+ stream-id)
  (unless (= (- end start) 5)
    (stream-error* stream-id +frame-size-error+ "PRIORITY length ~D, must be 5" (- end start)))
  (let* ((word (read-u32 octets start))
         (dependency (logand word #x7fffffff)))
    (when (= dependency stream-id)
      (stream-error* stream-id +protocol-error+ "stream ~D depends on itself" stream-id))
    (values (logbitp 31 word) dependency (1+ (aref octets (+ start 4))))))

(defun decode-rst-stream-payload (octets start end stream-id)
  "RST_STREAM (6.4).  Returns the error code."
  (declare (type octets octets) (type index start end) (type stream-id stream-id))
  (require-stream +frame-rst-stream+ stream-id)
  (unless (= (- end start) 4)
    (connection-error +frame-size-error+ "RST_STREAM length ~D, must be 4" (- end start)))
  (read-u32 octets start))

(defun decode-settings-payload (octets start end flags stream-id)
  "SETTINGS (6.5).  Returns a list of (identifier . value) in frame order,
each value validated (6.5.2); NIL for an ACK."
  (declare (type octets octets) (type index start end) (type octet flags)
           (type stream-id stream-id))
  (require-no-stream +frame-settings+ stream-id)
  (let ((length (- end start)))
    (cond ((logtest flags +flag-ack+)
           (unless (zerop length)
             (connection-error +frame-size-error+ "SETTINGS ACK with ~D octets" length))
           nil)
          (t
           (unless (zerop (mod length 6))
             (connection-error +frame-size-error+ "SETTINGS length ~D not a multiple of 6"
                               length))
           (loop for pos of-type index from start below end by 6
                 collect (let ((id (read-u16 octets pos))
                               (value (read-u32 octets (+ pos 2))))
                           (validate-setting id value)
                           (cons id value)))))))

(defun decode-push-promise-payload (octets start end flags stream-id)
  "PUSH_PROMISE (6.6).  Returns (values promised-stream-id block-start block-end).
Whether push is allowed at all is the connection's decision."
  (declare (type octets octets) (type index start end) (type octet flags)
           (type stream-id stream-id))
  (require-stream +frame-push-promise+ stream-id)
  (multiple-value-bind (s e) (strip-padding +frame-push-promise+ octets start end flags)
    (declare (type index s e))
    (when (> (+ s 4) e)
      (if (> (+ s 4) end)
          (connection-error +frame-size-error+ "PUSH_PROMISE too short")
          (connection-error +protocol-error+ "PUSH_PROMISE padding exceeds block")))
    (values (read-u31 octets s) (+ s 4) e)))

(defun decode-ping-payload (octets start end stream-id)
  "PING (6.7).  Returns the 8 opaque octets as a 64-bit integer."
  (declare (type octets octets) (type index start end) (type stream-id stream-id))
  (require-no-stream +frame-ping+ stream-id)
  (unless (= (- end start) 8)
    (connection-error +frame-size-error+ "PING length ~D, must be 8" (- end start)))
  (read-u64 octets start))

(defun decode-goaway-payload (octets start end stream-id)
  "GOAWAY (6.8).  Returns (values last-stream-id error-code debug-start debug-end)."
  (declare (type octets octets) (type index start end) (type stream-id stream-id))
  (require-no-stream +frame-goaway+ stream-id)
  (when (< (- end start) 8)
    (connection-error +frame-size-error+ "GOAWAY length ~D, must be >= 8" (- end start)))
  (values (read-u31 octets start) (read-u32 octets (+ start 4)) (+ start 8) end))

(defun decode-window-update-payload (octets start end stream-id)
  "WINDOW_UPDATE (6.9).  Returns the increment (1..2^31-1)."
  (declare (type octets octets) (type index start end) (type stream-id stream-id))
  (unless (= (- end start) 4)
    (connection-error +frame-size-error+ "WINDOW_UPDATE length ~D, must be 4" (- end start)))
  (let ((increment (read-u31 octets start)))
    (when (zerop increment)
      (if (zerop stream-id)
          (connection-error +protocol-error+ "WINDOW_UPDATE increment 0 on the connection")
          (stream-error* stream-id +protocol-error+ "WINDOW_UPDATE increment 0")))
    increment))

(defun decode-continuation-payload (octets start end stream-id)
  "CONTINUATION (6.10).  Returns (values block-start block-end); that it
follows a HEADERS without END_HEADERS on the same stream is the
connection's check."
  (declare (ignore octets) (type index start end) (type stream-id stream-id))
  (require-stream +frame-continuation+ stream-id)
  (values start end))

;;; ------------------------------------------------------------------
;;; Whole-frame convenience decoder

(defstruct frame
  "A decoded frame.  DATA is the source vector; DATA-START/DATA-END delimit
the DATA payload, the header block fragment (HEADERS, PUSH_PROMISE,
CONTINUATION), GOAWAY debug data, or the raw payload of an unknown type."
  (type 0 :type octet)
  (flags 0 :type octet)
  (stream-id 0 :type stream-id)
  (length 0 :type frame-length)
  (data nil :type (or null octets))
  (data-start 0 :type index)
  (data-end 0 :type index)
  (pad-length 0 :type octet)
  (error-code nil)
  (last-stream-id nil)
  (promised-stream-id nil)
  (increment nil)
  (settings nil :type list)
  (opaque-data nil)
  (priority-exclusive nil)
  (priority-dependency nil)
  (priority-weight nil))

(defun frame-end-stream-p (frame)
  (and (member (frame-type frame) '(#.+frame-data+ #.+frame-headers+))
       (logtest (frame-flags frame) +flag-end-stream+)))
(defun frame-end-headers-p (frame)
  (and (member (frame-type frame)
               '(#.+frame-headers+ #.+frame-push-promise+ #.+frame-continuation+))
       (logtest (frame-flags frame) +flag-end-headers+)))
(defun frame-ack-p (frame)
  (and (member (frame-type frame) '(#.+frame-settings+ #.+frame-ping+))
       (logtest (frame-flags frame) +flag-ack+)))

(defun decode-frame (octets &key (start 0) (end (length octets))
                                 (max-frame-size +default-max-frame-size+))
  "Decode the frame at OCTETS[START,END).  Returns (values frame next-pos),
or (values nil START) when the buffer does not yet hold the whole frame.
The length is checked against MAX-FRAME-SIZE as soon as the header is
available, before waiting for the payload."
  (declare (type octets octets) (type index start end))
  (when (< (- end start) +frame-header-length+)
    (return-from decode-frame (values nil start)))
  (multiple-value-bind (length type flags stream-id) (decode-frame-header octets start)
    (check-frame-size length type max-frame-size)
    (let ((ps (+ start +frame-header-length+))
          (pe (+ start +frame-header-length+ length)))
      (when (> pe end)
        (return-from decode-frame (values nil start)))
      (let ((f (make-frame :type type :flags flags :stream-id stream-id :length length
                           :data octets :data-start ps :data-end pe)))
        (macrolet ((range (form)
                     `(multiple-value-bind (s e) ,form
                        (setf (frame-data-start f) s (frame-data-end f) e))))
          (case type
            (#.+frame-data+
             (multiple-value-bind (s e pad) (decode-data-payload octets ps pe flags stream-id)
               (setf (frame-data-start f) s (frame-data-end f) e (frame-pad-length f) pad)))
            (#.+frame-headers+
             (multiple-value-bind (s e exclusive dependency weight)
                 (decode-headers-payload octets ps pe flags stream-id)
               (setf (frame-data-start f) s (frame-data-end f) e
                     (frame-pad-length f) (if (logtest flags +flag-padded+) (aref octets ps) 0)
                     (frame-priority-exclusive f) exclusive
                     (frame-priority-dependency f) dependency
                     (frame-priority-weight f) (and dependency weight))))
            (#.+frame-priority+
             (multiple-value-bind (exclusive dependency weight)
                 (decode-priority-payload octets ps pe stream-id)
               (setf (frame-priority-exclusive f) exclusive
                     (frame-priority-dependency f) dependency
                     (frame-priority-weight f) weight)))
            (#.+frame-rst-stream+
             (setf (frame-error-code f) (decode-rst-stream-payload octets ps pe stream-id)))
            (#.+frame-settings+
             (setf (frame-settings f) (decode-settings-payload octets ps pe flags stream-id)))
            (#.+frame-push-promise+
             (multiple-value-bind (promised s e)
                 (decode-push-promise-payload octets ps pe flags stream-id)
               (setf (frame-promised-stream-id f) promised)
               (range (values s e))))
            (#.+frame-ping+
             (setf (frame-opaque-data f) (decode-ping-payload octets ps pe stream-id)))
            (#.+frame-goaway+
             (multiple-value-bind (last code s e) (decode-goaway-payload octets ps pe stream-id)
               (setf (frame-last-stream-id f) last (frame-error-code f) code)
               (range (values s e))))
            (#.+frame-window-update+
             (setf (frame-increment f) (decode-window-update-payload octets ps pe stream-id)))
            (#.+frame-continuation+
             (range (decode-continuation-payload octets ps pe stream-id)))))
        (values f pe)))))
