package main

import (
	"fmt"
	"time"
)

// How long a turn waits for the server to close the connections of the
// turn before, and how often it looks.
const (
	closeSettleTimeout = 30 * time.Second
	closeSettlePoll    = 20 * time.Millisecond
)

// awaitServerClosed waits until the started server holds no more file
// descriptors than it did before the cell first connected: it has closed
// every connection of the last turn. The client closes its ends at once, but
// a server notices 10,000 closed connections over some time, and that work
// and memory would otherwise land in the next turn's measurement, its own or
// its rival's. It gives up after closeSettleTimeout, saying so.
func (c *cell) awaitServerClosed() {
	srv := c.ss.server
	if srv == nil || c.fdBaseline == 0 {
		return
	}
	deadline := time.Now().Add(closeSettleTimeout)
	for {
		n, err := srv.OpenFiles()
		if err != nil || n <= c.fdBaseline {
			return
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(c.ss.progress, "[%s] %s: the server still holds %d descriptors (%d before connecting) after %v; measuring on\n",
				suite, c.name, n, c.fdBaseline, closeSettleTimeout)
			return
		}
		time.Sleep(closeSettlePoll)
	}
}
