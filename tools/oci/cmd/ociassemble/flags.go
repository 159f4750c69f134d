package main

import (
	"fmt"
	"strings"
)

// listFlag collects every occurrence of a repeatable flag, in order.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// required returns an error naming the first empty flag of name, value pairs.
func required(nameValues ...string) error {
	for i := 0; i+1 < len(nameValues); i += 2 {
		if nameValues[i+1] == "" {
			return fmt.Errorf("--%s is required", nameValues[i])
		}
	}
	return nil
}
