package main

import (
	"context"
	"fmt"
	"net"
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
// empty SETTINGS frame. After that it says nothing and reads nothing, as
// an idle or keepalive-only client of a real service does between calls.
var preface = append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 0, 0, 0, 4, 0, 0, 0, 0, 0)

// openIdle opens n idle HTTP/2 connections to addr. The returned function
// closes them. This end closes first, so each leaves a TIME_WAIT socket here:
// measuring two servers in turns at 10,000 connections reconnects more often
// than the ephemeral ports could last for, which works because Linux reuses
// TIME_WAIT ports on loopback (net.ipv4.tcp_tw_reuse, 2 by default).
func openIdle(ctx context.Context, addr string, n int) (func(), error) {
	conns := make([]net.Conn, 0, n)
	closeAll := func() {
		for _, c := range conns {
			c.Close()
		}
	}
	ctx, cancel := context.WithTimeout(ctx, idleConnectTimeout)
	defer cancel()
	var d net.Dialer
	for i := range n {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			_, err = c.Write(preface)
		}
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("idle connection %d of %d: %w", i+1, n, err)
		}
		conns = append(conns, c)
	}
	return closeAll, nil
}

// scaleMetrics are the connection-scale metrics of a finished scenario,
// one value per repetition: the server's RSS after it, and that RSS divided
// by the connections held. (The server's CPU per request is the harness's
// server_cpu_per_op.)
func scaleMetrics(reps []harness.Rep, rss []float64, conns int) []schema.Metric {
	if len(rss) != len(reps) {
		return nil
	}
	perConn := make([]float64, len(rss))
	for i, v := range rss {
		perConn[i] = v / float64(conns)
	}
	return []schema.Metric{
		schema.NewMetric(schema.MetricServerRSS, schema.UnitBytes, schema.LowerIsBetter, rss),
		schema.NewMetric(schema.MetricServerRSSPerConn, schema.UnitBytes, schema.LowerIsBetter, perConn),
	}
}
