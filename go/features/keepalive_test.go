package features_test

import (
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

func TestKeepaliveHalvesItsPingsAfterTooManyPings(t *testing.T) {
	t.Parallel()
	// grpc-go's server allows a ping a minute. The client pings after 10 s
	// of silence while a call waits 45 s: its fourth ping is the third
	// strike, and the server ends the connection (GOAWAY ENHANCE_YOUR_CALM
	// too_many_pings) about 40 s in. The second call then pings every 20 s
	// and draws only one strike in its 45 s, so it is answered.
	lis := listen(t)
	p := startPeer(t, lis, grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: time.Minute}))
	got := runGrpccall(t, lis.Addr().String(), "-method", flakyPath, "-calls", "2", "-keepalive_time", "10s",
		"-timeout", "80s", "-metadata", "call-id=pings,sleep-ms=45000")
	if len(got) != 2 || got[0].Code != "UNAVAILABLE" || got[1].Code != "OK" {
		t.Fatalf("the calls: %+v; want the first ended by too_many_pings (UNAVAILABLE), the second answered", got)
	}
	if got[0].Ms < 30000 || got[0].Ms > 45000 {
		t.Errorf("the first call ended after %d ms, want about 40 s (the fourth ping)", got[0].Ms)
	}
	t.Logf("first call: %s %q after %d ms; second: %s after %d ms", got[0].Code, got[0].Message, got[0].Ms, got[1].Code, got[1].Ms)
	if n := len(p.seen("pings")); n != 2 {
		t.Errorf("grpc-go saw %d attempts, want 2", n)
	}
}

// freezer forwards one TCP connection to a server until frozen; from then
// on it drops whatever either side sends, like a network that lost the
// path.
type freezer struct {
	lis    net.Listener
	frozen atomic.Bool
}

func startFreezer(t *testing.T, server string) *freezer {
	t.Helper()
	f := &freezer{lis: listen(t)}
	t.Cleanup(func() { f.lis.Close() })
	go func() {
		client, err := f.lis.Accept()
		if err != nil {
			return
		}
		defer client.Close()
		upstream, err := net.Dial("tcp", server)
		if err != nil {
			return
		}
		defer upstream.Close()
		done := make(chan struct{}, 2)
		go f.pipe(upstream, client, done)
		go f.pipe(client, upstream, done)
		<-done
	}()
	return f
}

func (f *freezer) pipe(dst io.Writer, src io.Reader, done chan<- struct{}) {
	defer func() { done <- struct{}{} }()
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 && !f.frozen.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func TestKeepaliveClosesAConnectionWhosePeerStoppedAnswering(t *testing.T) {
	t.Parallel()
	lis := listen(t)
	startPeer(t, lis)
	f := startFreezer(t, lis.Addr().String())
	time.AfterFunc(time.Second, func() { f.frozen.Store(true) })
	// The call would wait 60 s for the server; keepalive finds the path
	// gone 10 s after the last frame read, plus the 1 s ping timeout.
	got := runGrpccall(t, f.lis.Addr().String(), "-method", flakyPath, "-keepalive_time", "10s",
		"-keepalive_timeout", "1s", "-metadata", "call-id=frozen,sleep-ms=60000")
	if len(got) != 1 || got[0].Code != "UNAVAILABLE" || !strings.Contains(got[0].Message, "keepalive") {
		t.Fatalf("the call: %+v, want UNAVAILABLE for the unanswered keepalive ping", got)
	}
	if got[0].Ms < 10000 || got[0].Ms > 20000 {
		t.Errorf("the call failed after %d ms, want about 11 s", got[0].Ms)
	}
	t.Logf("%s %q after %d ms", got[0].Code, got[0].Message, got[0].Ms)
}
