#!/usr/bin/env bash
# Runs the interop suite (a lisp_test binary) with the Go RouteGuide server and
# client and the Lisp client program that Bazel built:
#   interop_test.sh SUITE_BINARY GO_SERVER GO_CLIENT LISP_CLIENT
set -euo pipefail
ROUTEGUIDE_GO_SERVER="$(pwd)/$2"
ROUTEGUIDE_GO_CLIENT="$(pwd)/$3"
ROUTEGUIDE_LISP_CLIENT="$(pwd)/$4"
LISP_TEST_SUITES=":routeguide-interop"
export ROUTEGUIDE_GO_SERVER ROUTEGUIDE_GO_CLIENT ROUTEGUIDE_LISP_CLIENT LISP_TEST_SUITES
exec "$1"
