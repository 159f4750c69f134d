package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// Metrics of the connection-scale suite (-total_conns), beside the
// harness's own.
const (
	connScaleSuite          = "connscale"
	idleConnectTimeout      = 30 * time.Second
	idleSettleBeforeMeasure = time.Second
)

// preface is what an idle client sends: the HTTP/2 client preface and an
// empty SETTINGS frame. Then it acknowledges the server's SETTINGS, which
// completes the HTTP/2 handshake (RFC 9113 3.4), and after that says
// nothing and reads nothing, as an idle or keepalive-only client of a real
// service does between calls.
var (
	preface     = append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 0, 0, 0, 4, 0, 0, 0, 0, 0)
	settingsAck = []byte{0, 0, 0, 4, 1, 0, 0, 0, 0}
)

// HTTP/2 frame header fields an idle client reads.
const (
	frameHeaderLen   = 9
	frameTypeSetting = 4
	flagAck          = 1
)

// openIdle opens n idle HTTP/2 connections to addr, each with its handshake
// complete: the server has sent its SETTINGS and this end has acknowledged
// them. The returned function closes them. This end closes first, so each
// leaves a TIME_WAIT socket here: measuring two servers in turns at 10,000
// connections reconnects more often than the ephemeral ports could last
// for, which works because Linux reuses TIME_WAIT ports on loopback
// (net.ipv4.tcp_tw_reuse, 2 by default).
func openIdle(ctx context.Context, addr string, n int, t *transport) (func(), error) {
	conns := make([]net.Conn, 0, n)
	closeAll := func() {
		for _, c := range conns {
			c.Close()
		}
	}
	ctx, cancel := context.WithTimeout(ctx, idleConnectTimeout)
	defer cancel()
	var d net.Dialer
	// All prefaces first, then all acknowledgements: the server answers
	// each connection while the next ones open.
	deadline, _ := ctx.Deadline()
	for i := range n {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			if c, err = t.secure(c, deadline); err == nil {
				_, err = c.Write(preface)
			}
		}
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("idle connection %d of %d: %w", i+1, n, err)
		}
		conns = append(conns, c)
	}
	for i, c := range conns {
		if err := ackServerSettings(c, deadline); err != nil {
			closeAll()
			return nil, fmt.Errorf("idle connection %d of %d, handshake: %w", i+1, n, err)
		}
	}
	return closeAll, nil
}

// ackServerSettings reads the server's connection preface, which must be a
// SETTINGS frame (RFC 9113 3.4), and acknowledges it.
func ackServerSettings(c net.Conn, deadline time.Time) error {
	if err := c.SetReadDeadline(deadline); err != nil {
		return err
	}
	var h [frameHeaderLen]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		return fmt.Errorf("reading the server's SETTINGS: %w", err)
	}
	length := int64(h[0])<<16 | int64(h[1])<<8 | int64(h[2])
	if h[3] != frameTypeSetting || h[4]&flagAck != 0 {
		return fmt.Errorf("the server's first frame is of type %d, flags %#x, not SETTINGS", h[3], h[4])
	}
	if _, err := io.CopyN(io.Discard, c, length); err != nil {
		return fmt.Errorf("reading the server's SETTINGS: %w", err)
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		return err
	}
	_, err := c.Write(settingsAck)
	return err
}

// scaleSample is what the connection-scale suite reads of the server after
// a repetition.
type scaleSample struct {
	rss  float64 // resident set, bytes
	held float64 // connections held: open sockets beyond those before the cell (-1: not read)
}

// scaleMetrics are the connection-scale metrics of a finished scenario: the
// server's RSS after each repetition; that RSS divided by the connections
// (which counts the starting heap too); the connections it held after each;
// and marginal, the growth of its anonymous RSS per connection each time
// the cell's connections opened (once, or once a turn), before any load:
// what one more costs. (The server's CPU per request is the harness's server_cpu_per_op.)
// Metrics not read after every repetition are left out, and so is the
// marginal RSS if a reading of it fell: the heap then moved by more than
// the connections added, and the figure would be noise.
func scaleMetrics(reps []harness.Rep, samples []scaleSample, marginal []float64, conns int) []schema.Metric {
	if len(samples) != len(reps) || len(samples) == 0 {
		return nil
	}
	var rss, perConn, held []float64
	for _, s := range samples {
		rss = append(rss, s.rss)
		perConn = append(perConn, s.rss/float64(conns))
		if s.held >= 0 {
			held = append(held, s.held)
		}
	}
	out := []schema.Metric{
		schema.NewMetric(schema.MetricServerRSS, schema.UnitBytes, schema.LowerIsBetter, rss),
		schema.NewMetric(schema.MetricServerRSSPerConn, schema.UnitBytes, schema.LowerIsBetter, perConn),
	}
	if len(held) == len(samples) {
		out = append(out, schema.NewMetric(schema.MetricServerConnsHeld, schema.UnitCount, schema.HigherIsBetter, held))
	}
	if len(marginal) > 0 && slices.Min(marginal) >= 0 {
		out = append(out, schema.NewMetric(schema.MetricServerMarginalRSSPerConn, schema.UnitBytes, schema.LowerIsBetter, marginal))
	}
	return out
}
