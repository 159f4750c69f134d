;;;; Coverage-guided fuzzing of clgrpc's decoders: the engine (coverage,
;;;; mutation, corpus, findings) and one target per decoder.

(defpackage #:clgrpc.fuzz
  (:use #:cl #:clgrpc.octets)
  (:export #:main #:fuzz #:fuzz-target #:find-target #:target-names #:write-seeds
           #:*sources*))

(defpackage #:clgrpc.fuzz.pb
  (:use #:cl)
  (:documentation "Messages generated from tests/data/test_types.pb, which the
protobuf and gRPC framing targets decode into."))
