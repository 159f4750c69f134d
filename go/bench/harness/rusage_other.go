//go:build !unix

package harness

import "errors"

func selfCPU() (CPUTimes, error) {
	return CPUTimes{}, errors.New("getrusage is not available on this system")
}
