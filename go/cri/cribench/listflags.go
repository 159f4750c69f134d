package main

import (
	"fmt"
	"strconv"
	"strings"
)

// intsFlag is a flag of comma-separated non-negative integers, such as
// -containers 32,1024.
type intsFlag []int

func (l *intsFlag) String() string {
	parts := make([]string, len(*l))
	for i, v := range *l {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ",")
}

func (l *intsFlag) Set(s string) error {
	var out intsFlag
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || v < 0 {
			return fmt.Errorf("%q is not a non-negative integer", part)
		}
		out = append(out, v)
	}
	*l = out
	return nil
}

// methodsFlag is a flag of comma-separated methods: -mode list,stream.
type methodsFlag []method

func (l *methodsFlag) String() string {
	parts := make([]string, len(*l))
	for i, m := range *l {
		parts[i] = string(m)
	}
	return strings.Join(parts, ",")
}

func (l *methodsFlag) Set(s string) error {
	var out methodsFlag
	for _, part := range strings.Split(s, ",") {
		m, err := parseMethod(strings.TrimSpace(part))
		if err != nil {
			return err
		}
		out = append(out, m)
	}
	*l = out
	return nil
}

// stringsFlag is a flag of comma-separated words: -codec criwire,floor.
type stringsFlag []string

func (l *stringsFlag) String() string { return strings.Join(*l, ",") }

func (l *stringsFlag) Set(s string) error {
	var out stringsFlag
	for _, part := range strings.Split(s, ",") {
		out = append(out, strings.TrimSpace(part))
	}
	*l = out
	return nil
}
