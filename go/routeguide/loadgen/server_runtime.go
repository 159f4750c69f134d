package main

import (
	"os"
	"strings"
)

// runtimeVariables are the environment variables that tune the servers'
// runtimes: Go's collector and scheduler, and SBCL's heap. A started server
// inherits them from the load generator.
var runtimeVariables = []string{"GOGC", "GOMAXPROCS", "GOMEMLIMIT", "GODEBUG", "SBCL_HOME"}

// serverRuntime says which runtime settings a started server gets: the
// defaults, or the variables set, so that results show a tuned run as one.
func serverRuntime() string {
	var set []string
	for _, v := range runtimeVariables {
		if val, ok := os.LookupEnv(v); ok {
			set = append(set, v+"="+val)
		}
	}
	if len(set) == 0 {
		return "runtime defaults (" + strings.Join(runtimeVariables[:3], ", ") + " unset)"
	}
	return "environment " + strings.Join(set, " ")
}
