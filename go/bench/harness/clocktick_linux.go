package harness

import (
	"encoding/binary"
	"os"
	"strconv"
)

// defaultClockTicks is USER_HZ, which Linux fixes at 100 on every
// architecture this repository builds for. It is only used when the
// auxiliary vector cannot be read.
const defaultClockTicks = 100

// atClkTck is the auxiliary vector tag of sysconf(_SC_CLK_TCK).
const atClkTck = 17

// clockTicksPerSecond returns the unit of /proc/<pid>/stat times. The kernel
// passes it to every process in the auxiliary vector; reading it there
// avoids needing cgo for sysconf (the Go binaries here are built pure).
func clockTicksPerSecond() int64 {
	data, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return defaultClockTicks
	}
	if hz := auxvValue(data, atClkTck); hz > 0 {
		return int64(hz)
	}
	return defaultClockTicks
}

// auxvValue finds tag in an auxiliary vector: pairs of native-endian,
// native-word-size (tag, value) ending with tag 0.
func auxvValue(auxv []byte, tag uint64) uint64 {
	word := strconv.IntSize / 8
	read := func(b []byte) uint64 {
		if word == 8 {
			return binary.NativeEndian.Uint64(b)
		}
		return uint64(binary.NativeEndian.Uint32(b))
	}
	for len(auxv) >= 2*word {
		t, v := read(auxv), read(auxv[word:])
		if t == 0 {
			break
		}
		if t == tag {
			return v
		}
		auxv = auxv[2*word:]
	}
	return 0
}
