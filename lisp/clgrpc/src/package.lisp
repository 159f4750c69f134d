;;;; Package definitions for clgrpc.  Loaded before every other file so each
;;;; source file can be compiled on its own (one file per Bazel action) with
;;;; only this file and its real dependencies loaded.
;;;;
;;;; One package per protocol concern keeps the layers honest: HPACK knows
;;;; nothing about frames, protobuf knows nothing about HTTP/2.

(defpackage #:clgrpc.octets
  (:use #:cl)
  (:documentation "Typed octet vectors, a growable output buffer, big-endian
readers and UTF-8 / Latin-1 conversion.")
  (:export
   ;; types
   #:octet #:octets #:index #:make-octets #:octets-of
   #:hex-to-octets #:octets-to-hex
   #:latin1-to-octets #:octets-to-latin1 #:str=
   ;; output buffer
   #:obuf #:obuf-p #:make-obuf #:obuf-data #:obuf-fill #:obuf-length
   #:obuf-reset #:obuf-give-away #:obuf-reserve #:obuf-ensure
   #:obuf-write-u8 #:obuf-write-u16 #:obuf-write-u24 #:obuf-write-u32
   #:obuf-write-u64 #:obuf-write-bytes #:obuf-write-latin1
   #:obuf-set-u8 #:obuf-set-u24 #:obuf-set-u32
   #:obuf-contents #:obuf-subseq #:obuf-view
   ;; big-endian readers
   #:read-u8 #:read-u16 #:read-u24 #:read-u32 #:read-u31 #:read-u64
   ;; UTF-8
   #:utf8-length #:obuf-write-utf8 #:string-to-utf8 #:utf8-to-string
   #:utf8-decoding-error #:utf8-decoding-error-position))

(defpackage #:clgrpc.hpack
  (:use #:cl #:clgrpc.octets)
  (:documentation "HPACK header compression, RFC 7541.")
  (:export
   #:hpack-error #:hpack-error-message
   ;; integers and strings (section 5)
   #:encode-integer #:decode-integer #:+max-hpack-integer+
   #:huffman-encoded-length #:huffman-encode #:huffman-decode
   #:encode-string #:decode-string
   ;; tables (sections 2.3, 4, Appendix A)
   #:+static-table-length+ #:static-table-entry
   #:static-table-find
   #:dynamic-table #:make-dynamic-table #:dynamic-table-size
   #:dynamic-table-max-size #:dynamic-table-length #:dynamic-table-entry
   #:dynamic-table-entries #:dynamic-table-add #:dynamic-table-resize
   #:+entry-overhead+ #:header-entry-size
   ;; decoder (section 6)
   #:decoder #:make-decoder #:decoder-table #:decoder-max-table-size-limit
   #:decoder-set-max-table-size-limit
   #:decode-header-block
   ;; encoder
   #:encoder #:make-encoder #:encoder-table #:encoder-huffman
   #:encoder-set-max-table-size #:encode-header #:encode-header-block))

(defpackage #:clgrpc.protobuf
  (:use #:cl #:clgrpc.octets)
  (:documentation "Protocol Buffers binary wire format: varints, zigzag,
fixed-width, length-delimited and packed fields, unknown-field preservation.")
  (:export
   #:+max-message-depth+ #:decode-error
   #:protobuf-decode-error #:protobuf-decode-error-message
   #:+wire-varint+ #:+wire-fixed64+ #:+wire-length-delimited+
   #:+wire-start-group+ #:+wire-end-group+ #:+wire-fixed32+
   #:make-tag #:tag-field-number #:tag-wire-type #:+max-field-number+
   ;; sizes
   #:varint-size #:int32-size #:int64-size #:sint32-size #:sint64-size
   #:tag-size #:length-delimited-size #:string-size
   ;; zigzag
   #:zigzag-encode-32 #:zigzag-decode-32 #:zigzag-encode-64 #:zigzag-decode-64
   ;; writers
   #:write-varint #:write-int32 #:write-int64 #:write-uint32 #:write-uint64
   #:write-sint32 #:write-sint64 #:write-bool #:write-enum
   #:write-fixed32 #:write-fixed64 #:write-sfixed32 #:write-sfixed64
   #:write-float #:write-double #:write-tag
   #:write-bytes #:write-utf8-string #:write-length-prefix
   #:write-packed #:packed-payload-size
   ;; readers
   #:read-varint #:read-uint32 #:read-int32 #:read-int64 #:read-uint64
   #:read-sint32 #:read-sint64 #:read-bool #:read-enum
   #:read-fixed32 #:read-fixed64 #:read-sfixed32 #:read-sfixed64
   #:read-float #:read-double #:read-tag
   #:read-length-delimited #:read-bytes #:read-utf8-string
   #:read-packed
   ;; unknown fields
   #:skip-field #:collect-unknown-field
   ;; generated messages (see codegen)
   #:encode-message #:message-size #:decode-message #:serialize #:deserialize
   #:begin-length-prefix #:end-length-prefix
   #:define-messages-from-descriptor-set))

(defpackage #:clgrpc.util
  (:use #:cl)
  (:documentation "Threading utilities the connection and gRPC layers share: a
monotonic microsecond clock, condition waits with deadlines, a ring FIFO, the
executor (an elastic pool of workers fed in batches), a heap guard, a log
written by its own thread, a deadline scheduler, and a small JSON reader and
writer.")
  (:export
   #:now-us #:wait-on #:counted-wait #:broadcast-if-waiting
   #:fifo #:make-fifo #:fifo-push #:fifo-pop #:fifo-peek #:fifo-empty-p #:fifo-count
   #:fifo-capacity
   #:fifo-clear
   #:parse-json #:write-json
   #:log-line #:log-drain #:ensure-log-thread #:usable-cpu-count
   #:affinity-cpu-count #:cgroup-cpu-limit
   #:executor #:make-executor #:executor-submit #:executor-submit-batch #:shutdown-executor
   #:with-worker-mutex
   #:executor-queued-count
   #:executor-max-threads
   #:ensure-heap-guard #:heap-after-last-collection
   #:timer #:schedule-timer #:cancel-timer #:timer-deadline #:timer-pending-p))

(defpackage #:clgrpc.net
  (:use #:cl #:clgrpc.octets)
  (:documentation "TCP sockets on sb-bsd-sockets, with reads and writes done on
the file descriptor so the hot path neither conses nor goes through streams.")
  (:export
   #:tcp-listen #:tcp-accept #:tcp-connect #:connect-timeout #:connect-aborted #:socket-local-port #:socket-fd
   #:socket-close #:fd-read #:fd-write #:fd-write-some #:fd-write-some-sap #:fd-shutdown #:fd-wait-readable
   #:fd-recv-some #:fd-close #:resolve-host #:resolve-addresses #:ipv6-literal-p #:raise-open-file-limit
   ;; epoll and eventfd (epoll.lisp)
   #:+epollin+ #:+epollout+ #:+epollerr+ #:+epollhup+ #:+epollrdhup+
   #:epoll-create #:epoll-control #:make-epoll-events #:epoll-wait
   #:epoll-event-flags #:epoll-event-fd
   #:eventfd-create #:eventfd-signal #:eventfd-drain))

(defpackage #:clgrpc.tls
  (:use #:cl #:clgrpc.octets)
  (:documentation "TLS 1.2 and 1.3 on OpenSSL 3 over memory BIOs: contexts
(credentials, verification, ALPN h2) and sessions that the HTTP/2 reactor
drives without blocking.")
  (:export
   #:tls-error #:tls-error-message #:ensure-openssl #:*openssl-version*
   #:tls-context #:tls-context-role #:make-server-context #:make-client-context
   #:tls-session #:make-tls-session #:session-free #:session-feed #:session-handshake
   #:session-read #:session-write-some #:session-send-pending #:session-output-pending-p #:session-pending-octets #:session-trim
   #:session-idle-since #:session-close-notify
   #:tls-session-role #:tls-session-established #:tls-session-version #:tls-session-alpn
   #:tls-session-peer-subject #:tls-session-peer-names))

(defpackage #:clgrpc.http2
  (:use #:cl #:clgrpc.octets)
  (:documentation "HTTP/2 framing layer, RFC 9113 sections 4, 6 and 7.")
  (:export
   ;; error codes (section 7) and conditions
   #:+no-error+ #:+protocol-error+ #:+internal-error+ #:+flow-control-error+
   #:+settings-timeout+ #:+stream-closed+ #:+frame-size-error+
   #:+refused-stream+ #:+cancel+ #:+compression-error+ #:+connect-error+
   #:+enhance-your-calm+ #:+inadequate-security+ #:+http-1-1-required+
   #:error-code-name #:error-code-from-name
   #:http2-error #:http2-error-code #:http2-error-stream-id
   #:http2-error-connection-p #:http2-error-message
   #:connection-error #:stream-error*
   ;; frame types, flags, settings identifiers
   #:+frame-data+ #:+frame-headers+ #:+frame-priority+ #:+frame-rst-stream+
   #:+frame-settings+ #:+frame-push-promise+ #:+frame-ping+ #:+frame-goaway+
   #:+frame-window-update+ #:+frame-continuation+
   #:+flag-end-stream+ #:+flag-ack+ #:+flag-end-headers+ #:+flag-padded+
   #:+flag-priority+
   #:+settings-header-table-size+ #:+settings-enable-push+
   #:+settings-max-concurrent-streams+ #:+settings-initial-window-size+
   #:+settings-max-frame-size+ #:+settings-max-header-list-size+
   #:+frame-header-length+ #:+default-max-frame-size+
   #:+max-allowed-frame-size+ #:+max-window-size+ #:+default-window-size+
   #:+connection-preface+ #:frame-type-name
   ;; frame header
   #:write-frame-header #:decode-frame-header #:check-frame-size
   #:begin-frame #:finish-frame #:finish-headers-frame
   ;; encoders
   #:write-data-frame #:write-headers-frame #:write-header-block-frames
   #:write-priority-frame #:write-rst-stream-frame #:write-settings-frame
   #:write-settings-ack #:write-push-promise-frame #:write-ping-frame
   #:write-goaway-frame #:write-window-update-frame
   #:write-continuation-frame
   ;; decoders
   #:decode-data-payload #:decode-headers-payload #:decode-priority-payload
   #:decode-rst-stream-payload #:decode-settings-payload
   #:validate-setting #:decode-push-promise-payload #:decode-ping-payload
   #:decode-goaway-payload #:decode-window-update-payload
   #:decode-continuation-payload
   ;; whole-frame convenience decoder
   #:frame #:frame-type #:frame-flags #:frame-stream-id #:frame-length
   #:frame-data #:frame-data-start #:frame-data-end #:frame-end-stream-p
   #:frame-end-headers-p #:frame-ack-p #:frame-error-code
   #:frame-last-stream-id #:frame-promised-stream-id #:frame-increment
   #:frame-settings #:frame-priority-exclusive #:frame-priority-dependency
   #:frame-priority-weight #:frame-pad-length #:frame-opaque-data
   #:decode-frame
   ;; streams (section 5.1)
   #:h2-stream #:h2-stream-id #:h2-stream-state #:h2-stream-user
   #:stream-send-window #:h2-stream-recv-window
   ;; connections
   #:connection #:make-connection #:connection-start #:connection-role
   #:connection-user #:connection-app #:connection-closed-p #:connection-lock
   #:connection-goaway-received-p #:connection-goaway-sent-p #:connection-peer-goaway
   #:connection-peer-settings-seen-p
   #:connection-stream-count #:connection-peer-max-concurrent-streams
   #:connection-peer-max-frame-size #:connection-send-window
   #:connection-close #:connection-shutdown #:connection-send-goaway #:connection-wait-closed #:connection-ping
   #:with-connection-lock #:reader-thread-p
   #:connection-finished-p #:connection-handler-count #:connection-tls
   #:connection-close-reason #:connection-lane
   ;; limits and reactors
   #:connection-limits #:make-connection-limits #:*default-limits*
   #:*reactor-thread-wrapper* #:*reactor-count* #:reactor-count
   ;; what the layer above (gRPC) does with a connection, without its lock
   #:header-list-size #:connection-peer-max-header-list-size
   #:flush-connection #:reset-stream #:stream-consumed
   ;; ... and with the connection's lock held (WITH-CONNECTION-LOCK, or in a
   ;; callback): the seam between gRPC and HTTP/2, described in DESIGN.md
   #:stream-write-headers #:stream-write-data #:stream-write-last-data
   #:stream-reset #:stream-return-window #:request-flush
   #:stream-can-send-p #:stream-can-receive-p #:stream-mid-message-p #:header-list-fits-p
   #:open-stream #:defer-to-reader #:hand-off #:with-stream-output
   #:claim-handler-slot #:release-handler-slot
   #:stream-charge #:stream-discharge #:connection-receive-stall-timeout
   #:claim-sender-over-budget #:release-sender-over-budget
   ;; memory budgets (budget.lisp)
   #:memory-budget #:make-memory-budget #:memory-budget-held
   #:memory-budget-connection-octets #:memory-budget-process-octets
   #:default-process-octets
   ;; header validation (section 8)
   #:malformed-field-block))

(defpackage #:clgrpc.grpc
  (:use #:cl #:clgrpc.octets #:clgrpc.util)
  (:documentation "gRPC over HTTP/2: length-prefixed messages, status codes,
metadata, deadlines and cancellation; a server with handlers for the four
kinds of method, and a client channel.")
  (:export
   ;; status
   #:+ok+ #:+cancelled+ #:+unknown+ #:+invalid-argument+ #:+deadline-exceeded+
   #:+not-found+ #:+already-exists+ #:+permission-denied+ #:+resource-exhausted+
   #:+failed-precondition+ #:+aborted+ #:+out-of-range+ #:+unimplemented+
   #:+internal+ #:+unavailable+ #:+data-loss+ #:+unauthenticated+
   #:status-code-name #:grpc-error #:grpc-error-code #:grpc-error-message
   #:grpc-error-metadata #:grpc-error-details #:raise-grpc-error
   #:status-detail #:make-status-detail #:status-detail-type-url #:status-detail-value
   #:encode-rpc-status #:decode-rpc-status
   #:percent-encode-message #:percent-decode-message
   ;; deadlines and metadata
   #:parse-grpc-timeout #:format-grpc-timeout
   #:base64-encode #:base64-decode
   ;; codecs
   #:raw-encoder #:raw-decoder
   ;; calls (both sides)
   #:call #:call-state #:call-start-us #:call-metadata #:call-deadline #:call-cancelled-p #:call-method-path
   #:call-peer-trailers #:call-peer-tls #:call-response-metadata #:call-status-code #:call-status-message
   #:call-send #:call-recv #:call-close-send #:call-cancel #:call-close-and-recv
   #:call-set-response-metadata #:call-set-trailer-metadata #:call-send-headers
   #:call-set-response-compression #:call-received-compressed-p
   ;; interceptors
   #:call-on-finish #:call-message-octets #:call-attempt-count #:call-channel-target #:call-property
   #:call-info #:call-info-on-finish #:call-info-target #:call-info-method #:call-info-kind #:call-info-metadata
   #:call-info-timeout #:call-info-request #:call-info-on-attempt #:call-attempt-message-octets
   #:call-wrap-messages
   ;; server
   #:server #:make-server #:register-method #:server-start #:server-port #:server-stop
   #:server-memory-held #:register-heap-report #:+heap-report-path+
   #:server-connection-count #:server-refused-connection-count #:server-runtime-line
   #:serve-until-stopped #:heap-report-line
   #:register-service-descriptors #:server-service-names #:server-file-descriptors
   ;; client
   #:channel #:make-channel #:channel-close #:*connect-timeout* #:*client-keepalive-floor*
   #:make-target-channel #:parse-target #:target-error #:channel-connectivity-state
   #:resolve-by-dns #:*re-resolution-interval*
   #:parse-service-config #:service-config #:service-config-error #:service-config-error-reason
   #:service-config-throttle #:retry-throttle-token-count
   #:unary-call #:server-streaming-call #:client-streaming-call #:bidi-streaming-call))


(defpackage #:clgrpc.descriptor
  (:use #:cl #:clgrpc.octets #:clgrpc.protobuf)
  (:documentation "Reader for binary google.protobuf.FileDescriptorSet files
(protoc --descriptor_set_out, Bazel proto_library), producing plain Lisp
structures for code generation.")
  (:export
   #:file-descriptor #:file-descriptor-name #:file-descriptor-package
   #:file-descriptor-dependencies #:file-descriptor-messages #:file-descriptor-enums
   #:file-descriptor-services #:file-descriptor-syntax #:file-descriptor-octets
   #:message-descriptor #:message-descriptor-name #:message-descriptor-full-name
   #:message-descriptor-fields #:message-descriptor-nested-messages
   #:message-descriptor-enums #:message-descriptor-oneofs
   #:message-descriptor-map-entry-p #:message-descriptor-reserved-ranges
   #:message-descriptor-reserved-names #:message-descriptor-file
   #:field-descriptor #:field-descriptor-name #:field-descriptor-number
   #:field-descriptor-label #:field-descriptor-type #:field-descriptor-type-name
   #:field-descriptor-json-name #:field-descriptor-oneof-index
   #:field-descriptor-proto3-optional #:field-descriptor-default-value
   #:field-descriptor-packed-option
   #:enum-descriptor #:enum-descriptor-name #:enum-descriptor-full-name
   #:enum-descriptor-values
   #:service-descriptor #:service-descriptor-name #:service-descriptor-full-name
   #:service-descriptor-methods
   #:method-descriptor #:method-descriptor-name #:method-descriptor-input-type
   #:method-descriptor-output-type #:method-descriptor-client-streaming-p
   #:method-descriptor-server-streaming-p #:method-descriptor-path
   #:read-file-descriptor-set #:read-file-descriptor #:load-file-descriptor-set
   #:descriptor-pool #:make-descriptor-pool #:pool-files #:find-descriptor
   #:field-repeated-p #:field-packed-p #:field-map-entry #:field-scalar-p
   #:all-messages #:all-enums))

(defpackage #:clgrpc.codegen
  (:use #:cl #:clgrpc.octets #:clgrpc.protobuf #:clgrpc.descriptor)
  (:documentation "Lisp message structures, their encoders and decoders, and
gRPC service stubs, generated from a FileDescriptorSet at macroexpansion
time.")
  (:export #:define-messages-from-descriptor-set #:define-services-from-descriptor-set
           #:message-definitions-form #:service-definitions-form
           #:lisp-name))
