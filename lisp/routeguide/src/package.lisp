;;;; The package of the RouteGuide service: the four methods, the feature
;;;; database they answer from, and the small JSON reader and writer that
;;;; database (and the load generator) use.  The programs have packages of
;;;; their own: ROUTEGUIDE.SERVER, ROUTEGUIDE.CLIENT, ROUTEGUIDE.LOADGEN.
;;;; The generated protocol code is in ROUTEGUIDE.PROTO, defined by the
;;;; lisp_proto_library //lisp/routeguide:routeguide_lisp_proto under Bazel
;;;; and by proto.lisp under ASDF.

(defpackage #:routeguide
  (:use #:cl #:routeguide.proto)
  (:documentation "The RouteGuide service on clgrpc, behaving like go/routeguide/service.")
  (:export #:make-service #:register-service
           #:load-features #:default-features #:lookup-feature #:feature-db-features
           #:distance-meters
           #:+max-latitude+ #:+max-longitude+ #:+max-notes-per-location+
           #:parse-json #:write-json))
