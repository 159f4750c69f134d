package main

import (
	"context"
	"fmt"
	"time"
)

// How long a turn waits for the server to close the connections of the
// turn before, and how often it looks.
const (
	closeSettleTimeout = 30 * time.Second
	closeSettlePoll    = 20 * time.Millisecond
)

// serverSockets is the started server's open sockets, or false when there
// is no started server to look at (-addr) or it cannot be read.
func (ss *session) serverSockets() (int, bool) {
	if ss.server == nil {
		return 0, false
	}
	n, err := ss.server.OpenSockets()
	return n, err == nil
}

// awaitServerClosed waits until the started server holds no more sockets
// than it did before this turn connected: it has closed every connection of
// the turn. The client closes its ends at once, but a server notices 10,000
// closed connections over some time, and that work and memory would
// otherwise land in the next turn's measurement, its own or its rival's. It
// gives up after closeSettleTimeout, saying so, or when ctx ends.
func (c *cell) awaitServerClosed(ctx context.Context) {
	if c.socketBaseline < 0 {
		return
	}
	deadline := time.Now().Add(closeSettleTimeout)
	for {
		n, ok := c.ss.serverSockets()
		if !ok || n <= c.socketBaseline || ctx.Err() != nil {
			return
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(c.ss.progress, "[%s] %s: the server still holds %d sockets (%d before the turn) after %v; measuring on\n",
				suite, c.name, n, c.socketBaseline, closeSettleTimeout)
			return
		}
		time.Sleep(closeSettlePoll)
	}
}
