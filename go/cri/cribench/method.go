package main

import (
	"fmt"
	"strings"
)

// method is how the client lists containers; its name is the "method"
// parameter of the results, which the report's "cri" layout compares.
type method string

const (
	methodList    method = "list"    // RuntimeService.ListContainers: one unary response
	methodStream  method = "stream"  // RuntimeService.StreamContainers: one container per message
	methodChunked method = "chunked" // ChunkedRuntimeService.ListContainersChunked: per_chunk per message
)

var methods = []method{methodList, methodStream, methodChunked}

func parseMethod(s string) (method, error) {
	for _, m := range methods {
		if string(m) == s {
			return m, nil
		}
	}
	names := make([]string, len(methods))
	for i, m := range methods {
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown mode %q (want %s)", s, strings.Join(names, ", "))
}
