"""Runs the driver (driver.lisp) in the target's SBCL, under its emulator when it has one."""

TOOLCHAIN_TYPE = "//lisp/bazel:toolchain_type"

def sbcl_info(ctx):
    return ctx.toolchains[TOOLCHAIN_TYPE].sbcl

def run_driver(ctx, sbcl, command, arguments, inputs, outputs, mnemonic, progress_message):
    """Registers one action that runs `driver.lisp COMMAND ARGUMENTS...`.

    Args:
      ctx: the rule context (needs the private _driver attribute).
      sbcl: SbclInfo of the toolchain.
      command: "compile" or "save".
      arguments: list of strings after the command.
      inputs: depset of File the driver reads (fasls, sources).
      outputs: list of File.
      mnemonic: the action's mnemonic.
      progress_message: the action's progress message.
    """
    driver = ctx.file._driver
    sbcl_args = [
        sbcl.sbcl.path,
        "--core",
        sbcl.core.path,
        "--noinform",
        "--disable-ldb",
        "--lose-on-corruption",
        "--end-runtime-options",
        "--no-sysinit",
        "--no-userinit",
        "--non-interactive",
        # Loaded under its execroot-relative name: `--load` would record the absolute path of the
        # sandbox in the driver's debug info, which a saved executable keeps, and whose length
        # shifts every object allocated after it (two output bases gave 2 MB of differences).
        "--eval",
        '(let ((sb-c::*source-namestring* "{0}")) (load "{0}"))'.format(driver.path),
        "--end-toplevel-options",
        command,
    ] + arguments
    if sbcl.emulator:
        executable = sbcl.emulator
        args = ["-L", sbcl.sysroot] + sbcl_args
    else:
        executable = sbcl.sbcl
        args = sbcl_args[1:]
    env = {"SBCL_HOME": sbcl.core.dirname}
    if sbcl.library_path:
        env["LD_LIBRARY_PATH"] = sbcl.library_path
    ctx.actions.run(
        executable = executable,
        arguments = args,
        inputs = depset([driver], transitive = [inputs, sbcl.files]),
        outputs = outputs,
        env = env,
        mnemonic = mnemonic,
        progress_message = progress_message,
        # Compiling and saving never need the network.
        execution_requirements = {"block-network": "1"},
    )

def requires_arg(requires):
    """The driver's REQUIRES argument for a depset or list of module names."""
    names = requires.to_list() if type(requires) == "depset" else requires
    return ",".join(names) if names else "-"
