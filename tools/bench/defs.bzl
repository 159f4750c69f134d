"""Benchmarks as Bazel targets.

    load("//tools/bench:defs.bzl", "benchmark")

    benchmark(
        name = "bench",
        binary = ":loadgen",                    # a binary built on //go/bench/harness
        args = ["-clients=1,10,100", "-duration=5s"],
        tools = {"//go/routeguide/server": "-server"},
    )

declares two targets with the same pinned parameters:

- `bench_results`: `bazel build` measures once, in a build action, and outputs bench_results.json
  (schema //go/bench/schema, validated), bench_results.txt (Go benchmark format, for benchstat)
  and bench_results.md (what the binary prints: its tables and the suite's Markdown report).
  A rebuild with unchanged inputs on this machine is a cache hit (Bazel's local caches only: the
  action is tagged no-remote, and the target "benchmark-results"); a change to a parameter, to any
  input or to the machine (//tools/bench:host_key) re-measures. Every result records when it was measured and the
  SHA-256 of what it measured; built with `--stamp`, it also records the source revision and is
  measured again when that changes. The action runs alone on the machine (it asks the local
  scheduler for more CPUs than exist) and never remotely.
- `bench`: `bazel run` runs the same benchmark live: progress on stderr, the table on stdout.
  Arguments after `--` are appended, so they override pinned values.

The results JSON is checked by //go/bench/cmd/benchvalidate in a validation action. Measurements
are slow by nature, so give full-size benchmarks tags = ["manual"]: then `bazel test //...` leaves
them alone and they run through their own targets. `bench_report` renders results as Markdown/SVG.
"""

load("//tools/bench/private:benchmark.bzl", "benchmark_results", "benchmark_runner")
load("//tools/bench/private:report.bzl", _bench_report = "bench_report")

bench_report = _bench_report

_PLATFORM = select({
    "@platforms//cpu:aarch64": "linux_arm64",
    "//conditions:default": "linux_amd64",
})

def benchmark(name, binary, args = [], tools = {}, files = {}, tags = [], **kwargs):
    """A benchmark: NAME runs it live, NAME_results measures it as a cached build output.

    Args:
      name: the runnable target; the results target is NAME_results.
      binary: the benchmark binary (harness flags: -out, -benchfmt, -platform, -build_config, -host).
      args: the pinned parameters.
      tools: executables the benchmark starts, as {label: flag}; each is passed as flag=path.
      files: single files the benchmark reads (credentials, a library), as {label: flag}; each is
        passed as flag=path.
      tags: tags for both targets.
      **kwargs: common attributes (visibility, ...).
    """
    benchmark_results(
        name = name + "_results",
        binary = binary,
        params = args,
        tools = tools,
        files = files,
        platform = _PLATFORM,
        stamp = select({
            "//tools/bench:stamped": True,
            "//conditions:default": False,
        }),
        # "benchmark-results": a measurement of this machine, never remotely cached (the remote CI
        # leaves these out with --build_tag_filters).
        tags = tags + ["benchmark-results"],
        # A cross build cannot run what it measures (see //tools/bench:cross_building).
        target_compatible_with = select({
            "//tools/bench:is_cross_building": ["@platforms//:incompatible"],
            "//conditions:default": [],
        }),
        **kwargs
    )
    benchmark_runner(
        name = name,
        binary = binary,
        params = args,
        tools = tools,
        files = files,
        platform = _PLATFORM,
        tags = tags,
        **kwargs
    )
