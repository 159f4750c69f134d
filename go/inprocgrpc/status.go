package inprocgrpc

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// statusOf converts a handler's error as grpc.Server does before it writes
// the status: status errors (wrapped ones too) keep their code, context
// errors become Canceled or DeadlineExceeded, anything else is Unknown. The
// client gets a fresh status error, never the server's error value. nil
// stands for OK.
func statusOf(err error) *status.Status {
	if err == nil {
		return nil
	}
	if st, ok := status.FromError(err); ok {
		return st
	}
	return status.FromContextError(err)
}

// statusError is statusOf as an error: nil for OK.
func statusError(err error) error {
	return statusOf(err).Err()
}

// contextStatus is the error an RPC ends with when its context is done.
func contextStatus(ctxErr error) error {
	return status.FromContextError(ctxErr).Err()
}

// internalError reports a failure of the channel itself (a message that
// could not be copied), as grpc reports one of its codec.
func internalError(format string, args ...any) error {
	return status.Errorf(codes.Internal, "inprocgrpc: "+format, args...)
}
