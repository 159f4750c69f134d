"""host_key: this machine's description, from Bazel's workspace status, as a file actions can take."""

def _host_key_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".txt")

    # The stable status file also holds the source revision, which changes with every commit; this
    # action runs again then, but its output only changes with the machine, so the results that
    # take it as an input are measured again only on another machine (Bazel prunes by content).
    ctx.actions.run_shell(
        command = 'sed -n "s/^STABLE_GRPCBENCH_HOST //p" "$1" > "$2"; [ -s "$2" ] || echo unknown > "$2"',
        arguments = [ctx.info_file.path, out.path],
        inputs = [ctx.info_file],
        outputs = [out],
        mnemonic = "HostKey",
        progress_message = "Describing this machine for benchmark results",
        execution_requirements = {
            # The description is of the machine that builds: never run or cached elsewhere.
            "no-remote": "1",
        },
    )
    return [DefaultInfo(files = depset([out]))]

host_key = rule(
    implementation = _host_key_impl,
    doc = "Writes NAME.txt: the STABLE_GRPCBENCH_HOST line of the workspace status (tools/bench/host_key.sh).",
)
