package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// rawServer accepts connections on loopback and runs serve on each.
func rawServer(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return lis.Addr().String()
}

// An idle connection completes the HTTP/2 handshake: it acknowledges the
// server's SETTINGS after sending its own preface.
func TestOpenIdleAcknowledgesSettings(t *testing.T) {
	acked := make(chan bool, 3)
	addr := rawServer(t, func(c net.Conn) {
		got := make([]byte, len(preface))
		if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, preface) {
			acked <- false
			return
		}
		// SETTINGS with one setting (MAX_CONCURRENT_STREAMS = 100).
		c.Write([]byte{0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100})
		ack := make([]byte, len(settingsAck))
		_, err := io.ReadFull(c, ack)
		acked <- err == nil && bytes.Equal(ack, settingsAck)
		io.Copy(io.Discard, c)
	})
	closeAll, err := openIdle(context.Background(), addr, 3, &transport{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	for range 3 {
		select {
		case ok := <-acked:
			if !ok {
				t.Fatal("a connection did not acknowledge the server's SETTINGS")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no acknowledgement")
		}
	}
}

// A peer that does not answer with SETTINGS is not an HTTP/2 server: the
// connections fail with an error that says so.
func TestOpenIdleRejectsANonHTTP2Server(t *testing.T) {
	addr := rawServer(t, func(c net.Conn) {
		c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
		io.Copy(io.Discard, c)
	})
	_, err := openIdle(context.Background(), addr, 2, &transport{})
	if err == nil || !strings.Contains(err.Error(), "not SETTINGS") {
		t.Fatalf("err = %v, want one naming the frame that is not SETTINGS", err)
	}
}

// The marginal RSS is reported as read, unless a reading fell (noise
// larger than the connections' cost); metrics not read after every
// repetition are left out.
func TestScaleMetrics(t *testing.T) {
	reps := make([]harness.Rep, 2)
	samples := []scaleSample{{rss: 110 << 20, held: 1001}, {rss: 112 << 20, held: 1001}}
	byName := func(ms []schema.Metric) map[string]schema.Metric {
		out := map[string]schema.Metric{}
		for _, m := range ms {
			out[m.Name] = m
		}
		return out
	}
	ms := byName(scaleMetrics(reps, samples, []float64{20480, 21504}, 1001))
	if m := ms[schema.MetricServerMarginalRSSPerConn]; !slices.Equal(m.Reps, []float64{20480, 21504}) {
		t.Errorf("marginal RSS %v", m.Reps)
	}
	if m := ms[schema.MetricServerConnsHeld]; !slices.Equal(m.Reps, []float64{1001, 1001}) {
		t.Errorf("held %v", m.Reps)
	}
	if m := ms[schema.MetricServerRSSPerConn]; m.Reps[0] != float64(110<<20)/1001 {
		t.Errorf("RSS per connection %v", m.Reps)
	}
	samples[1].held = -1
	ms = byName(scaleMetrics(reps, samples, []float64{20480, -4096}, 1001))
	for _, name := range []string{schema.MetricServerMarginalRSSPerConn, schema.MetricServerConnsHeld} {
		if _, ok := ms[name]; ok {
			t.Errorf("%s from readings that are not all there or fell", name)
		}
	}
}

// A server that holds fewer sockets than the cell's idle connections fails
// the cell: its figures would not be for the count claimed.
func TestCheckHeld(t *testing.T) {
	c := &cell{ss: &session{cfg: config{conns: perClient}}, s: scenario{clients: 1, total: 100}}
	c.scale = []scaleSample{{held: 100}}
	if err := c.checkHeld(); err != nil {
		t.Errorf("all held: %v", err)
	}
	// The count includes the clients' connections: 99 of 100 is one idle
	// connection dropped.
	c.scale = []scaleSample{{held: 99}}
	if err := c.checkHeld(); err == nil {
		t.Error("one connection dropped, not noticed")
	}
	c.scale = append(c.scale, scaleSample{held: 57})
	if err := c.checkHeld(); err == nil || !strings.Contains(err.Error(), "held 57") {
		t.Errorf("57 of 99 held: %v", err)
	}
	c.scale = []scaleSample{{held: -1}}
	if err := c.checkHeld(); err != nil {
		t.Errorf("not counted: %v", err)
	}
}

// The cells' order is a permutation drawn from the seed, the same for the
// same seed.
func TestShuffleScenarios(t *testing.T) {
	cfg := config{rpcs: []rpcKind{unary}, clients: []int{1}, totalConns: []int{100, 1000, 10000, 20000, 30000}}
	a, b := cfg.scenarios(), cfg.scenarios()
	if seed := harness.Shuffle(a, 42); seed != 42 {
		t.Errorf("seed %d", seed)
	}
	harness.Shuffle(b, 42)
	if !slices.Equal(a, b) {
		t.Errorf("one seed, two orders: %v, %v", a, b)
	}
	totals := func(s []scenario) []int {
		var out []int
		for _, x := range s {
			out = append(out, x.total)
		}
		return out
	}
	if got := totals(a); slices.Equal(got, cfg.totalConns) || !slices.Equal(slices.Sorted(slices.Values(got)), cfg.totalConns) {
		t.Errorf("order %v: not a shuffle of %v", got, cfg.totalConns)
	}
	if harness.Shuffle(b, 0) == 0 {
		t.Error("seed 0 was used as is")
	}
}
