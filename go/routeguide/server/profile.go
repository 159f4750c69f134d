package main

import (
	"errors"
	"os"
	"runtime/pprof"
)

// startCPUProfile writes a CPU profile of this process, in pprof's format, to
// path until the returned function is called. It is how the server's time is
// broken down beside the Lisp server's sb-sprof profiles
// (lisp/routeguide/tools/profile-server.sh); a benchmark never sets it, since
// sampling is not the runtime's default.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return errors.Join(f.Sync(), f.Close())
	}, nil
}
