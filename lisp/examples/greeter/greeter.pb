
ò
greeter.protogreeter""
HelloRequest
name (	Rname"&

HelloReply
message (	Rmessage2ƒ
Greeter6
SayHello.greeter.HelloRequest.greeter.HelloReply@
SayHelloToEach.greeter.HelloRequest.greeter.HelloReply(0bproto3