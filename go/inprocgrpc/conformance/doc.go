// Package conformance runs grpchan's own channel test suite
// (github.com/fullstorydev/grpchan/grpchantesting) against go/inprocgrpc,
// in every configuration of the channel. It has no code outside its test.
package conformance
