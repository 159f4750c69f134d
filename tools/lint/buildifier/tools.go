//go:build tools

// Package buildifier pins the buildifier command for the lint phase.
package buildifier

import _ "github.com/bazelbuild/buildtools/buildifier"
