// Package hostile attacks gRPC servers the way hostile or broken peers do,
// over real sockets on loopback: floods of HEADERS fragments, PINGs,
// SETTINGS and stream resets, connections that never speak or never read,
// windows that never open, absurd message sizes, deep nesting, garbage and
// HTTP/1.1. Its test runs every attack against the Lisp and the Go
// RouteGuide servers as separate processes and checks, for each, that the
// server lives on, that a well-behaved client on a fresh connection is
// served within a second during the attack and after it, and that the
// server's memory stays under a stated bound.
package hostile
