;;;; HTTP/2 frame encoders (RFC 9113 section 6).  Each appends one complete
;;;; frame (header and payload) to an OBUF, so a burst of frames for many
;;;; streams accumulates in one buffer and goes out in a single write.
;;;;
;;;; Encoders assume the caller respects the peer's SETTINGS_MAX_FRAME_SIZE
;;;; (flow control and DATA splitting live in the connection layer); header
;;;; blocks are the exception, WRITE-HEADER-BLOCK-FRAMES splits them into
;;;; HEADERS + CONTINUATION because a block must go out contiguously.

(in-package #:clgrpc.http2)

(declaim (optimize (speed 3) (safety 1) (debug 0)))

(deftype pad-length () '(or null (unsigned-byte 8)))

(declaim (inline write-zeros))
(defun write-zeros (buf n)
  (declare (type obuf buf) (type index n))
  (multiple-value-bind (data pos) (obuf-reserve buf n)
    (fill data 0 :start pos :end (+ pos n))))

(defun write-data-frame (buf stream-id octets &key (start 0) (end (length octets))
                                                   end-stream padding)
  "DATA (6.1) carrying OCTETS[START,END).  PADDING, if given, is the number
of padding octets (0-255) and sets PADDED."
  (declare (type obuf buf) (type stream-id stream-id) (type octets octets)
           (type index start end) (type pad-length padding))
  (let ((flags (logior (if end-stream +flag-end-stream+ 0) (if padding +flag-padded+ 0)))
        (length (+ (- end start) (if padding (1+ padding) 0))))
    (write-frame-header buf length +frame-data+ flags stream-id)
    (when padding (obuf-write-u8 buf padding))
    (obuf-write-bytes buf octets start end)
    (when padding (write-zeros buf padding)))
  buf)

(defun write-headers-frame (buf stream-id block &key (start 0) (end (length block))
                                                     end-stream (end-headers t) padding
                                                     priority-dependency (priority-weight 16)
                                                     priority-exclusive)
  "HEADERS (6.2) with header block fragment BLOCK[START,END).  Passing
PRIORITY-DEPENDENCY adds the (deprecated but still parseable) priority
fields; WEIGHT is 1-256 and sent as weight-1."
  (declare (type obuf buf) (type stream-id stream-id) (type octets block)
           (type index start end) (type pad-length padding)
           (type (or null stream-id) priority-dependency)
           (type (integer 1 256) priority-weight))
  (let ((flags (logior (if end-stream +flag-end-stream+ 0)
                       (if end-headers +flag-end-headers+ 0)
                       (if padding +flag-padded+ 0)
                       (if priority-dependency +flag-priority+ 0)))
        (length (+ (- end start)
                   (if padding (1+ padding) 0)
                   (if priority-dependency 5 0))))
    (write-frame-header buf length +frame-headers+ flags stream-id)
    (when padding (obuf-write-u8 buf padding))
    (when priority-dependency
      (obuf-write-u32 buf (logior (if priority-exclusive #x80000000 0) priority-dependency))
      (obuf-write-u8 buf (1- priority-weight)))
    (obuf-write-bytes buf block start end)
    (when padding (write-zeros buf padding)))
  buf)

(defun write-continuation-frame (buf stream-id block &key (start 0) (end (length block))
                                                          (end-headers t))
  "CONTINUATION (6.10) with fragment BLOCK[START,END)."
  (declare (type obuf buf) (type stream-id stream-id) (type octets block)
           (type index start end))
  (write-frame-header buf (- end start) +frame-continuation+
                      (if end-headers +flag-end-headers+ 0) stream-id)
  (obuf-write-bytes buf block start end))

(defun write-header-block-frames (buf stream-id block max-frame-size
                                  &key (start 0) (end (length block)) end-stream)
  "A whole header block BLOCK[START,END) as HEADERS followed by as many
CONTINUATION frames as MAX-FRAME-SIZE (the peer's setting) requires.
END_STREAM goes on the HEADERS frame, END_HEADERS on the last frame (6.2)."
  (declare (type obuf buf) (type stream-id stream-id) (type octets block)
           (type index start end) (type (integer 1 16777215) max-frame-size))
  (let* ((first-end (min end (+ start max-frame-size)))
         (last (= first-end end)))
    (write-headers-frame buf stream-id block :start start :end first-end
                                             :end-stream end-stream :end-headers last)
    (loop with pos of-type index = first-end
          while (< pos end)
          do (let ((stop (min end (+ pos max-frame-size))))
               (write-continuation-frame buf stream-id block :start pos :end stop
                                                             :end-headers (= stop end))
               (setf pos stop))))
  buf)

(defun finish-headers-frame (buf header-pos max-frame-size)
  "For a HEADERS frame begun with BEGIN-FRAME (flags END_HEADERS and maybe
END_STREAM, no padding or priority) whose block was encoded in place:
patch its length, or, if the block is over MAX-FRAME-SIZE, re-emit it as
HEADERS + CONTINUATION.  The split copies, but only oversized blocks pay."
  (declare (type obuf buf) (type index header-pos) (type (integer 1 16777215) max-frame-size))
  (let ((length (- (obuf-fill buf) header-pos 9)))
    (if (<= length max-frame-size)
        (finish-frame buf header-pos)
        (let* ((data (obuf-data buf))
               (block (subseq data (+ header-pos 9) (obuf-fill buf)))
               (flags (aref data (+ header-pos 4)))
               (stream-id (read-u31 data (+ header-pos 5))))
          (setf (obuf-fill buf) header-pos)
          (write-header-block-frames buf stream-id block max-frame-size
                                     :end-stream (logtest flags +flag-end-stream+))
          length))))

(defun write-priority-frame (buf stream-id dependency weight &key exclusive)
  "PRIORITY (6.3).  WEIGHT is 1-256."
  (declare (type obuf buf) (type stream-id stream-id dependency)
           (type (integer 1 256) weight))
  (write-frame-header buf 5 +frame-priority+ 0 stream-id)
  (obuf-write-u32 buf (logior (if exclusive #x80000000 0) dependency))
  (obuf-write-u8 buf (1- weight)))

(defun write-rst-stream-frame (buf stream-id error-code)
  "RST_STREAM (6.4)."
  (declare (type obuf buf) (type stream-id stream-id) (type (unsigned-byte 32) error-code))
  (write-frame-header buf 4 +frame-rst-stream+ 0 stream-id)
  (obuf-write-u32 buf error-code))

(defun write-settings-frame (buf settings)
  "SETTINGS (6.5) with SETTINGS, a list of (identifier . value)."
  (declare (type obuf buf) (type list settings))
  (write-frame-header buf (* 6 (length settings)) +frame-settings+ 0 0)
  (loop for (id . value) in settings
        do (obuf-write-u16 buf id)
           (obuf-write-u32 buf value))
  buf)

(defun write-settings-ack (buf)
  "Empty SETTINGS with ACK (6.5.3)."
  (write-frame-header buf 0 +frame-settings+ +flag-ack+ 0))

(defun write-push-promise-frame (buf stream-id promised-stream-id block
                                 &key (start 0) (end (length block)) (end-headers t) padding)
  "PUSH_PROMISE (6.6).  Servers here never push; this exists for tests and
completeness."
  (declare (type obuf buf) (type stream-id stream-id promised-stream-id) (type octets block)
           (type index start end) (type pad-length padding))
  (write-frame-header buf (+ 4 (- end start) (if padding (1+ padding) 0)) +frame-push-promise+
                      (logior (if end-headers +flag-end-headers+ 0) (if padding +flag-padded+ 0))
                      stream-id)
  (when padding (obuf-write-u8 buf padding))
  (obuf-write-u32 buf promised-stream-id)
  (obuf-write-bytes buf block start end)
  (when padding (write-zeros buf padding))
  buf)

(defun write-ping-frame (buf opaque-data &key ack)
  "PING (6.7).  OPAQUE-DATA is a 64-bit integer (no allocation) or 8 octets."
  (declare (type obuf buf) (type (or (unsigned-byte 64) octets) opaque-data))
  (write-frame-header buf 8 +frame-ping+ (if ack +flag-ack+ 0) 0)
  (etypecase opaque-data
    ((unsigned-byte 64) (obuf-write-u64 buf opaque-data))
    (octets (assert (= 8 (length opaque-data)))
            (obuf-write-bytes buf opaque-data))))

(defun write-goaway-frame (buf last-stream-id error-code &optional debug-data)
  "GOAWAY (6.8) with optional DEBUG-DATA octets."
  (declare (type obuf buf) (type stream-id last-stream-id)
           (type (unsigned-byte 32) error-code) (type (or null octets) debug-data))
  (write-frame-header buf (+ 8 (if debug-data (length debug-data) 0)) +frame-goaway+ 0 0)
  (obuf-write-u32 buf last-stream-id)
  (obuf-write-u32 buf error-code)
  (when debug-data (obuf-write-bytes buf debug-data))
  buf)

(defun write-window-update-frame (buf stream-id increment)
  "WINDOW_UPDATE (6.9); STREAM-ID 0 is the connection window.  INCREMENT
must be 1..2^31-1 (0 is a protocol error at the receiver)."
  (declare (type obuf buf) (type stream-id stream-id)
           (type (integer 1 #.+max-window-size+) increment))
  (write-frame-header buf 4 +frame-window-update+ 0 stream-id)
  (obuf-write-u32 buf increment))
