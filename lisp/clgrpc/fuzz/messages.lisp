;;;; The message types the protobuf and gRPC framing targets decode into,
;;;; generated like any user's: scalars of every kind, a nested message that
;;;; repeats itself, packed and unpacked repeated fields, a map, a oneof and
;;;; proto3 optional (clgrpc.test.Everything), and RouteGuide's messages.

(in-package #:clgrpc.fuzz.pb)

(clgrpc.protobuf:define-messages-from-descriptor-set "../tests/data/test_types.pb")
