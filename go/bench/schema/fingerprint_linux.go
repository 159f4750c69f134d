package schema

import (
	"os"
	"syscall"
)

func fillFromOS(env *Environment) {
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		if m := parseCPUModel(f); m != "" {
			env.CPUModel = m
		}
		f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		env.MemoryBytes = parseMemTotal(f)
		f.Close()
	}
	var u syscall.Utsname
	if err := syscall.Uname(&u); err == nil {
		env.Kernel = utsString(u.Sysname[:]) + " " + utsString(u.Release[:])
	}
}

// utsString converts a NUL-terminated utsname field. Its element type is
// int8 on amd64 and uint8 on arm64, hence the generic parameter.
func utsString[T int8 | uint8](field []T) string {
	b := make([]byte, 0, len(field))
	for _, c := range field {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}
