package serverproc

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// CheckLoopback accepts a HOST:PORT whose host is a loopback IP literal
// (127.0.0.0/8 or ::1) and whose port is 1-65535. Benchmarks only ever
// measure a server on the same machine: a benchmark across a real
// network would measure the network, and a typo must not aim a load test at
// someone else's host. A name such as "localhost" is refused because what it
// resolves to is up to the machine's configuration.
func CheckLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not HOST:PORT: %v", addr, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return fmt.Errorf("%q: host must be a loopback IP such as 127.0.0.1", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: port must be a number from 1 to 65535", addr)
	}
	return nil
}
