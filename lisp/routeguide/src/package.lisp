;;;; The package of the RouteGuide service: the four methods and the feature
;;;; database they answer from (read with clgrpc's JSON reader, which it
;;;; passes on to the load generator).  The programs have packages of
;;;; their own: ROUTEGUIDE.SERVER, ROUTEGUIDE.CLIENT, ROUTEGUIDE.LOADGEN.
;;;; The generated protocol code is in ROUTEGUIDE.PROTO, defined by the
;;;; lisp_proto_library //lisp/routeguide:routeguide_lisp_proto under Bazel
;;;; and by proto.lisp under ASDF.

(defpackage #:routeguide
  (:use #:cl #:routeguide.proto)
  (:import-from #:clgrpc.util #:parse-json #:write-json)
  (:documentation "The RouteGuide service on clgrpc, behaving like go/routeguide/service.")
  (:export #:make-service #:register-service
           #:load-features #:default-features #:lookup-feature #:feature-db-features
           #:distance-meters
           #:+max-latitude+ #:+max-longitude+ #:+max-notes-per-location+
           #:parse-json #:write-json))
