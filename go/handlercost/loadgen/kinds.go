package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/grpcbench/grpcbench/go/handlercost/wire"
)

// handlerKind is one of the measured handlers: a method, what its request
// asks for, and how many callers call it (0: -callers).
type handlerKind struct {
	method  string
	d       time.Duration
	callers int
}

// name is the kind as the results record it in the "handler" parameter:
// "fast", "spin_200us", "sleep_100ms_1000_callers". A kind with callers of
// its own names them: they are part of its operating point, and the same
// handler may be measured at two counts.
func (k handlerKind) name() string {
	name := "fast"
	if k.method != wire.Fast {
		name = strings.ToLower(k.method) + "_" + strings.ReplaceAll(k.d.String(), "µs", "us")
	}
	if k.callers > 0 {
		name += fmt.Sprintf("_%d_callers", k.callers)
	}
	return name
}

// parseKinds parses -kinds: a comma list of fast, spin:DURATION and
// sleep:DURATION, each optionally @CALLERS.
func parseKinds(s string) ([]handlerKind, error) {
	var kinds []handlerKind
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		k, err := parseKind(strings.TrimSpace(item))
		if err != nil {
			return nil, err
		}
		if seen[k.name()] {
			return nil, fmt.Errorf("%q given twice", item)
		}
		seen[k.name()] = true
		kinds = append(kinds, k)
	}
	return kinds, nil
}

func parseKind(item string) (handlerKind, error) {
	var k handlerKind
	spec, callers, hasCallers := strings.Cut(item, "@")
	if hasCallers {
		n, err := strconv.Atoi(callers)
		if err != nil || n < 1 || n > maxCallers {
			return k, fmt.Errorf("%q: callers must be from 1 to %d", item, maxCallers)
		}
		k.callers = n
	}
	method, arg, hasArg := strings.Cut(spec, ":")
	switch {
	case method == "fast" && !hasArg:
		k.method = wire.Fast
		return k, nil
	case method == "sleep":
		k.method = wire.Sleep
	case method == "spin":
		k.method = wire.Spin
	default:
		return k, fmt.Errorf("%q: want fast, sleep:DURATION or spin:DURATION, each optionally @CALLERS", item)
	}
	d, err := time.ParseDuration(arg)
	if err != nil || d < time.Microsecond || d > wire.MaxMicros*time.Microsecond {
		return k, fmt.Errorf("%q: the duration must be from 1µs to %v", item, wire.MaxMicros*time.Microsecond)
	}
	k.d = d.Truncate(time.Microsecond)
	return k, nil
}
