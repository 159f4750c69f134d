package inprocgrpc

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
)

// serverContext is the context a handler runs with, and its
// grpc.ServerTransportStream (see metadata.go). It is fresh, as a server's
// context is: of the client's context it keeps only the deadline and the
// cancellation, never values; it adds the incoming metadata, the peer and
// the transport stream; and it ends when the RPC does.
//
// It is one allocation. Its Done channel is made only when someone asks for
// it, and only then is the client's cancellation wired to it: a unary
// handler that never selects on ctx.Done() costs no channel and no
// registration. It implements AfterFunc, so contexts derived from it with
// context.WithCancel and friends hook into it directly, as they would into
// a *context.cancelCtx, instead of each starting a watcher goroutine.
type serverContext struct {
	parent   context.Context // the client's: deadline and cancellation only
	method   string
	incoming metadata.MD
	stream   *stream // nil for a unary RPC run by Invoke
	// handler is what handlers get: this context itself, or, if grpcKeys
	// were not found, this context under WithValue layers.
	handler context.Context

	state atomic.Int32 // live, canceled or deadlineExceeded
	done  atomic.Value // chan struct{}, made by Done

	mu         sync.Mutex
	afterFuncs []*afterFunc
	stopParent func() bool // undoes the registration with parent

	md metadataState // guarded by mu
	// headerFlushed is md.headerSent, readable without the lock: a stream
	// checks it before every message it sends.
	headerFlushed atomic.Bool
}

const (
	live int32 = iota
	canceled
	deadlineExceeded
)

// closedChan is the Done channel of a context that ended before anyone
// asked for its Done channel.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func (c *serverContext) init(parent context.Context, method string, s *stream) {
	c.parent, c.method, c.stream = parent, method, s
	// FromOutgoingContext copies the metadata, so that the server never
	// shares a map with the client.
	c.incoming, _ = metadata.FromOutgoingContext(parent)
	c.handler = c
	if !grpcKeys.ok {
		h := metadata.NewIncomingContext(c, c.incoming)
		h = peer.NewContext(h, inprocPeer)
		c.handler = grpc.NewContextWithServerTransportStream(h, c)
	}
}

func (c *serverContext) Deadline() (time.Time, bool) { return c.parent.Deadline() }

func (c *serverContext) Done() <-chan struct{} {
	if d := c.done.Load(); d != nil {
		return d.(chan struct{})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.done.Load(); d != nil {
		return d.(chan struct{})
	}
	if c.state.Load() != live {
		c.done.Store(closedChan)
		return closedChan
	}
	d := make(chan struct{})
	c.done.Store(d)
	if c.parent.Done() != nil {
		c.stopParent = context.AfterFunc(c.parent, func() { c.cancel(c.parent.Err()) })
	}
	return d
}

func (c *serverContext) Err() error {
	switch c.state.Load() {
	case canceled:
		return context.Canceled
	case deadlineExceeded:
		return context.DeadlineExceeded
	}
	if err := c.parent.Err(); err != nil {
		// The client's context ended and the news has not arrived through
		// AfterFunc yet (or nobody asked for Done). End now: a context's Err
		// must not be set before its Done channel is closed.
		c.cancel(err)
		return c.Err()
	}
	return nil
}

// Value answers grpc's lookups and nothing else: the client's values stay
// on the client.
func (c *serverContext) Value(key any) any {
	if key == nil || !grpcKeys.ok {
		return nil
	}
	switch key {
	case grpcKeys.incoming:
		return c.incoming
	case grpcKeys.stream:
		return grpc.ServerTransportStream(c)
	case grpcKeys.peer:
		return inprocPeer
	}
	return nil
}

// cancel ends the context, with DeadlineExceeded if err is (or wraps) it
// and Canceled otherwise. Only the first call counts.
func (c *serverContext) cancel(err error) {
	st := canceled
	if errors.Is(err, context.DeadlineExceeded) {
		st = deadlineExceeded
	}
	if !c.state.CompareAndSwap(live, st) {
		return
	}
	c.mu.Lock()
	switch d, _ := c.done.Load().(chan struct{}); d {
	case nil:
		c.done.Store(closedChan)
	case closedChan:
	default:
		close(d)
	}
	fns, stop := c.afterFuncs, c.stopParent
	c.afterFuncs, c.stopParent = nil, nil
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
	for _, f := range fns {
		f.run()
	}
}

// AfterFunc arranges for f to run once the context ends, and returns a
// function that stops it. The context package looks for this method
// (its afterFuncer interface) and uses it to tie contexts derived from this
// one to it; f is then its own cancel function, which is why f runs on the
// goroutine that ends this context rather than on a new one.
func (c *serverContext) AfterFunc(f func()) (stop func() bool) {
	c.Done() // wires the client's cancellation, if not yet done
	a := &afterFunc{ctx: c, f: f}
	c.mu.Lock()
	if c.state.Load() != live {
		c.mu.Unlock()
		// The caller may hold its own lock around this call: do not run
		// f here.
		go a.run()
		return a.stop
	}
	c.afterFuncs = append(c.afterFuncs, a)
	c.mu.Unlock()
	return a.stop
}

type afterFunc struct {
	ctx  *serverContext
	once sync.Once
	f    func()
}

// run and stop race for once: whichever comes first decides.
func (a *afterFunc) run() { a.once.Do(a.f) }

// stop also forgets a, so that a handler deriving and cancelling contexts
// in a loop does not grow the list for the life of the RPC.
func (a *afterFunc) stop() bool {
	stopped := false
	a.once.Do(func() { stopped = true })
	if stopped {
		c := a.ctx
		c.mu.Lock()
		for i, b := range c.afterFuncs {
			if b == a {
				c.afterFuncs = append(c.afterFuncs[:i], c.afterFuncs[i+1:]...)
				break
			}
		}
		c.mu.Unlock()
	}
	return stopped
}
