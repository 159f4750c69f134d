package main

import (
	"flag"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// limits are what the server tolerates from its peers. The flags and their
// defaults are grpc-go's; the Lisp server takes the same flags, so that the
// two are compared like for like. A zero duration means "no limit" where
// grpc-go's default is infinity.
type limits struct {
	maxConnections        int
	connectionTimeout     time.Duration
	keepaliveTime         time.Duration
	keepaliveTimeout      time.Duration
	maxConnectionIdle     time.Duration
	maxConnectionAge      time.Duration
	maxConnectionAgeGrace time.Duration
	keepaliveMinTime      time.Duration
	permitWithoutStream   bool
	maxHeaderListSize     uint
}

func (l *limits) register(fs *flag.FlagSet) {
	fs.IntVar(&l.maxConnections, "max_connections", 0,
		"connections beyond this `count` are closed at once (0: no limit)")
	fs.DurationVar(&l.connectionTimeout, "connection_timeout", 120*time.Second,
		"how long a new connection may take to send the HTTP/2 preface and SETTINGS")
	fs.DurationVar(&l.keepaliveTime, "keepalive_time", 2*time.Hour,
		"ping a client silent for this long")
	fs.DurationVar(&l.keepaliveTimeout, "keepalive_timeout", 20*time.Second,
		"close the connection if a keepalive ping is not answered within this")
	fs.DurationVar(&l.maxConnectionIdle, "max_connection_idle", 0,
		"send GOAWAY to a connection without RPCs for this long (0: never)")
	fs.DurationVar(&l.maxConnectionAge, "max_connection_age", 0,
		"send GOAWAY to a connection this old (0: never)")
	fs.DurationVar(&l.maxConnectionAgeGrace, "max_connection_age_grace", 0,
		"close a connection this long after its age GOAWAY (0: never)")
	fs.DurationVar(&l.keepaliveMinTime, "keepalive_min_time", 5*time.Minute,
		"pings from a client closer than this are strikes; three get GOAWAY ENHANCE_YOUR_CALM")
	fs.BoolVar(&l.permitWithoutStream, "keepalive_permit_without_stream", false,
		"allow client pings when there are no RPCs")
	fs.UintVar(&l.maxHeaderListSize, "max_header_list_size", 16<<20,
		"SETTINGS_MAX_HEADER_LIST_SIZE advertised and enforced, in `bytes`")
}

// infinite maps "0: no limit" to grpc-go's infinity.
func infinite(d time.Duration) time.Duration {
	if d <= 0 {
		return time.Duration(1<<63 - 1)
	}
	return d
}

func (l *limits) serverOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ConnectionTimeout(l.connectionTimeout),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			Time:                  l.keepaliveTime,
			Timeout:               l.keepaliveTimeout,
			MaxConnectionIdle:     infinite(l.maxConnectionIdle),
			MaxConnectionAge:      infinite(l.maxConnectionAge),
			MaxConnectionAgeGrace: infinite(l.maxConnectionAgeGrace),
		}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{
			MinTime:             l.keepaliveMinTime,
			PermitWithoutStream: l.permitWithoutStream,
		}),
		grpc.MaxHeaderListSize(uint32(min(l.maxHeaderListSize, 1<<32-1))),
	}
}

// limitListener closes connections beyond max at once (grpc-go has no such
// knob; x/net/netutil's LimitListener makes them wait in the backlog
// instead, which a flood of idle connections fills just the same) and
// counts them.
type limitListener struct {
	net.Listener
	max     int
	mu      sync.Mutex
	open    int
	refused atomic.Int64
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.open >= l.max {
			l.mu.Unlock()
			l.refused.Add(1)
			c.Close()
			continue
		}
		l.open++
		l.mu.Unlock()
		return &countedConn{Conn: c, release: l.release}, nil
	}
}

func (l *limitListener) release() {
	l.mu.Lock()
	l.open--
	l.mu.Unlock()
}

type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
