"""Bazel rules for Common Lisp on SBCL, for linux_amd64 and linux_arm64.

    load("//lisp/bazel:defs.bzl", "lisp_binary", "lisp_library", "lisp_proto_library", "lisp_test")

    lisp_library(name = "lib", srcs = ["package.lisp", "lib.lisp"], deps = ["@cl_libraries//:alexandria"])
    lisp_binary(name = "tool", srcs = ["main.lisp"], deps = [":lib"], main = "tool:main")
    lisp_proto_library(name = "api_lisp", deps = [":api_proto"], package = "api.proto")
    lisp_test(name = "lib_test", srcs = ["tests.lisp"], deps = [":lib"], suites = ["lib.tests::all"])

- lisp_library compiles its srcs in order in one action (one SBCL process), after loading the fasls of
  its dependencies, loading each new fasl before the next file; a change recompiles the library.
  With `asd` and `asdf_system`, a validation action fails the build unless srcs are that ASDF
  system's source files in the .asd's order, so the two lists cannot drift apart (lisp_test's
  srcs are not checked).
- lisp_binary saves an executable with save-lisp-and-die; `main` is package:function, and its integer
  result is the exit code. For linux_arm64 the output is a real aarch64 executable, and `bazel run`
  runs it under qemu-user.
- lisp_cross_binary runs a lisp_binary built for another platform (e.g. //platforms:linux_arm64)
  from an ordinary build, under qemu-user; tests use it to run foreign executables.
- lisp_proto_library generates messages and gRPC stubs (clgrpc) from proto_library targets'
  descriptor sets, at compile time; no protoc plugin.
- lisp_test runs FiveAM suites, writes Bazel's XML report and fails on any failure; cross_platforms
  adds the same test for other platforms, run under qemu-user.

SBCL comes from Debian (see extensions.bzl), pinned in //tools/provision:artifacts.lock. Each source
file also belongs to an ASDF system, so the same code loads in a plain SBCL REPL.
"""

load("//lisp/bazel/private:binary.bzl", _lisp_binary = "lisp_binary")
load("//lisp/bazel/private:cross.bzl", _lisp_cross_binary = "lisp_cross_binary")
load("//lisp/bazel/private:library.bzl", _lisp_library = "lisp_library")
load("//lisp/bazel/private:proto.bzl", _lisp_proto_library = "lisp_proto_library")
load("//lisp/bazel/private:providers.bzl", _LispInfo = "LispInfo", _SbclInfo = "SbclInfo")
load("//lisp/bazel/private:test.bzl", _lisp_test = "lisp_test")
load("//lisp/bazel/private:toolchain.bzl", _sbcl_toolchain = "sbcl_toolchain")

LispInfo = _LispInfo
SbclInfo = _SbclInfo
lisp_binary = _lisp_binary
lisp_cross_binary = _lisp_cross_binary
lisp_library = _lisp_library
lisp_proto_library = _lisp_proto_library
lisp_test = _lisp_test
sbcl_toolchain = _sbcl_toolchain
