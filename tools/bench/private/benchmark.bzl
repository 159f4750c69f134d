"""benchmark: a measurement as a cacheable build output, and the same run live with `bazel run`."""

load("@bazel_skylib//lib:shell.bzl", "shell")
load("//tools/starlark:runfiles.bzl", "RUNFILES_ROOT_SH", "rlocation")

def _exclusive(_os, _inputs):
    # More CPUs than any machine has: Bazel's local scheduler then runs the measurement only while
    # no other action runs, so compiles and other benchmarks never share the machine with it.
    return {"cpu": 1024, "memory": 2048}

def _single_file(target):
    files = target[DefaultInfo].files.to_list()
    if len(files) != 1:
        fail("%s: a benchmark's files entry must be one file, not %d" % (target.label, len(files)))
    return files[0]

def _platform(ctx):
    return ctx.attr.platform or "unknown"

def _benchmark_results_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".json")
    benchfmt = ctx.actions.declare_file(ctx.label.name + ".txt")
    markdown = ctx.actions.declare_file(ctx.label.name + ".md")
    args = ctx.actions.args()
    args.add(markdown)

    # Stamped, the revision comes from Bazel's stable status file, read when the action runs. The
    # machine's description is an input always: a result measured on one machine is never taken for
    # another's.
    host = ctx.file._host_key
    inputs = [host] + ([ctx.info_file] if ctx.attr.stamp else [])
    args.add(host)
    args.add(ctx.info_file if ctx.attr.stamp else "")
    args.add(ctx.executable.binary)
    args.add_all(ctx.attr.params)
    for target, flag in ctx.attr.tools.items():
        args.add(flag, target[DefaultInfo].files_to_run.executable)
    for target, flag in ctx.attr.files.items():
        args.add(flag, _single_file(target))
    args.add("-out", out)
    args.add("-benchfmt", benchfmt)
    args.add("-platform", _platform(ctx))
    args.add("-build_config", ctx.var["COMPILATION_MODE"])

    # The binary's stdout, its tables and report, is kept as NAME.md: Bazel would otherwise relay
    # it to the stdout of whatever `bazel run` built the results, before that command's own output.
    ctx.actions.run_shell(
        command = " ".join([
            'markdown="$1"; host=$(cat "$2"); info="$3"; shift 3; rev="";',
            'if [ -n "$info" ]; then rev=$(sed -n "s/^STABLE_GRPCBENCH_REVISION //p" "$info"); fi;',
            '"$@" -host "$host" ${rev:+-revision "$rev"} > "$markdown"',
        ]),
        arguments = [args],
        inputs = depset(inputs, transitive = [t[DefaultInfo].files for t in ctx.attr.files] +
                                             [t[DefaultInfo].default_runfiles.files for t in ctx.attr.files]),
        tools = [ctx.attr.binary[DefaultInfo].files_to_run] + [t[DefaultInfo].files_to_run for t in ctx.attr.tools],
        outputs = [out, benchfmt, markdown],
        mnemonic = "Benchmark",
        progress_message = "Measuring %{label} (runs alone)",
        resource_set = _exclusive,
        execution_requirements = {
            # Measured where the build runs, and cached only there (the disk cache is this
            # machine's): a remote cache could hand this machine another's figures.
            "no-remote": "1",
            # Unsandboxed: a benchmark puts its servers into cgroups of its own (their CPU
            # pressure, and a CPU quota where one is asked for), and the sandbox mounts
            # /sys/fs/cgroup read-only. It reads the machine anyway (/proc, the host key): what it
            # measures is this machine, not only its declared inputs.
            "no-sandbox": "1",
        },
    )

    # The results must pass the schema validator; Bazel runs this with every build of the target.
    valid = ctx.actions.declare_file(ctx.label.name + ".valid")
    ctx.actions.run_shell(
        command = '"$1" "$2" >&2 && touch "$3"',
        arguments = [ctx.executable._validator.path, out.path, valid.path],
        tools = [ctx.attr._validator[DefaultInfo].files_to_run],
        inputs = [out],
        outputs = [valid],
        mnemonic = "BenchmarkValidate",
        progress_message = "Validating %{label}",
    )
    return [
        DefaultInfo(files = depset([out, benchfmt, markdown])),
        OutputGroupInfo(_validation = depset([valid])),
    ]

_COMMON_ATTRS = {
    "params": attr.string_list(doc = "the pinned parameters, as flags of the binary"),
    "binary": attr.label(mandatory = True, executable = True, cfg = "target"),
    "platform": attr.string(doc = "the target platform's name, recorded in the results"),
    "stamp": attr.bool(doc = "record the source revision from the workspace status (--stamp)"),
    "_host_key": attr.label(default = "//tools/bench:host_key", allow_single_file = True),
    "_host_key_script": attr.label(default = "//tools/bench:host_key.sh", allow_single_file = True),
    "tools": attr.label_keyed_string_dict(
        cfg = "target",
        doc = "executables the benchmark starts (servers), each passed as FLAG=path",
    ),
    "files": attr.label_keyed_string_dict(
        allow_files = True,
        cfg = "target",
        doc = "single files the benchmark reads (credentials, a library), each passed as FLAG=path",
    ),
}

benchmark_results = rule(
    implementation = _benchmark_results_impl,
    doc = "Runs a benchmark in a build action; outputs NAME.json (results), NAME.txt (benchfmt) and NAME.md (its tables and report).",
    attrs = _COMMON_ATTRS | {
        "_validator": attr.label(
            default = "//go/bench/cmd/benchvalidate",
            executable = True,
            cfg = "exec",
        ),
    },
)

def _benchmark_runner_impl(ctx):
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    pinned = list(ctx.attr.params) + ["-platform", _platform(ctx), "-build_config", ctx.var["COMPILATION_MODE"]]
    words = [shell.quote(a) for a in pinned]
    for target, flag in ctx.attr.tools.items():
        words += [shell.quote(flag), '"$r/%s"' % rlocation(ctx, target[DefaultInfo].files_to_run.executable)]
    for target, flag in ctx.attr.files.items():
        words += [shell.quote(flag), '"$r/%s"' % rlocation(ctx, _single_file(target))]
    ctx.actions.write(script, "\n".join([
        "#!/usr/bin/env bash",
        "# Generated by //tools/bench: runs %s live, with the pinned parameters." % ctx.attr.binary.label,
        "set -euo pipefail",
        RUNFILES_ROOT_SH,
        # Live, the machine is described when the run starts, as the workspace status does for a
        # cached result. Extra arguments come last, so that e.g. `-- -duration=1s` overrides a
        # pinned value.
        'exec "$r/%s" %s -host "$("$r/%s")" "$@"' % (
            rlocation(ctx, ctx.executable.binary),
            " ".join(words),
            rlocation(ctx, ctx.file._host_key_script),
        ),
        "",
    ]), is_executable = True)
    runfiles = ctx.runfiles(files = [ctx.file._host_key_script]).merge(ctx.attr.binary[DefaultInfo].default_runfiles)
    for t in ctx.attr.tools:
        runfiles = runfiles.merge(t[DefaultInfo].default_runfiles)
    for t in ctx.attr.files:
        runfiles = runfiles.merge(ctx.runfiles(transitive_files = t[DefaultInfo].files)).merge(t[DefaultInfo].default_runfiles)
    return [DefaultInfo(executable = script, runfiles = runfiles)]

benchmark_runner = rule(
    implementation = _benchmark_runner_impl,
    doc = "`bazel run` target: the same benchmark, live, printing progress and the table.",
    attrs = _COMMON_ATTRS,
    executable = True,
)
