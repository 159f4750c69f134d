package main

import "time"

// How long a server may take to announce itself, and to stop. SBCL servers
// start by mapping and possibly decompressing a core of tens of megabytes,
// under qemu for arm64, so readiness gets a generous bound. The stop grace
// is longer than the Go server's own graceful-shutdown timeout (5s), so a
// healthy server always finishes on its own.
const (
	serverReadyTimeout = 30 * time.Second
	serverStopGrace    = 10 * time.Second
)
