"""Runs the driver (driver.lisp) in the target's SBCL, under its emulator when it has one."""

TOOLCHAIN_TYPE = "//lisp/bazel:toolchain_type"

def sbcl_info(ctx):
    return ctx.toolchains[TOOLCHAIN_TYPE].sbcl

# Options for the runtime and the toplevel, the same for every action.
_SBCL_OPTIONS = [
    "--noinform",
    "--disable-ldb",
    "--lose-on-corruption",
    "--end-runtime-options",
    "--no-sysinit",
    "--no-userinit",
    "--non-interactive",
]

# The heap a saved executable reserves. save-lisp-and-die keeps the saving process's runtime options
# (the executable parses none of its own), so this is every program's heap. SBCL's default of 1 GiB
# is too small for a server: sixteen calls at a time with messages of up to 4 MiB exhausted it within
# half a minute of //go/hostile:soak, and SBCL dies when its heap is exhausted. Address space
# reserved, not memory: it costs about 18 MiB of resident page tables at start, and the saved
# toplevel keeps the default heap's collection interval (driver.lisp).
_SAVED_HEAP = ["--dynamic-space-size", "4GB"]

def _driver_arguments(driver_name, driver_path, command, runtime_options = []):
    """The SBCL options that load the driver from driver_path and run COMMAND, up to its arguments."""
    return runtime_options + _SBCL_OPTIONS + [
        # Loaded under its workspace name: `--load` would record the absolute path of the sandbox in
        # the driver's debug info, which a saved executable keeps.
        "--eval",
        '(let ((sb-c::*source-namestring* "{0}")) (load "{1}"))'.format(driver_name, driver_path),
        "--end-toplevel-options",
        command,
    ]

def _environment(sbcl):
    env = {"SBCL_HOME": sbcl.core.dirname}
    if sbcl.library_path:
        env["LD_LIBRARY_PATH"] = sbcl.library_path
    return env

def run_driver(ctx, sbcl, command, arguments, inputs, outputs, mnemonic, progress_message):
    """Registers one action that runs `driver.lisp COMMAND ARGUMENTS...` where the action runs.

    Args:
      ctx: the rule context (needs the private _driver attribute).
      sbcl: SbclInfo of the toolchain.
      command: "compile" (fasls depend only on their sources, wherever they are compiled).
      arguments: list of strings after the command.
      inputs: depset of File the driver reads (fasls, sources).
      outputs: list of File.
      mnemonic: the action's mnemonic.
      progress_message: the action's progress message.
    """
    driver = ctx.file._driver
    sbcl_args = [sbcl.sbcl.path, "--core", sbcl.core.path] + _driver_arguments(driver.path, driver.path, command) + arguments
    if sbcl.emulator:
        executable = sbcl.emulator
        args = ["-L", sbcl.sysroot] + sbcl_args
    else:
        executable = sbcl.sbcl
        args = sbcl_args[1:]
    ctx.actions.run(
        executable = executable,
        arguments = args,
        inputs = depset([driver], transitive = [inputs, sbcl.files]),
        outputs = outputs,
        env = _environment(sbcl),
        mnemonic = mnemonic,
        progress_message = progress_message,
        # Compiling never needs the network.
        execution_requirements = {"block-network": "1"},
    )

def run_save(ctx, sbcl, out, arguments, fasls, mnemonic, progress_message):
    """Registers the action that runs `driver.lisp save OUT ARGUMENTS... FASL...` through save.sh.

    save.sh runs SBCL in a directory whose path has the same length in every build: a saved heap
    keeps traces of the lengths of the paths the saving process used (see save.sh).

    Args:
      ctx: the rule context (needs the private _driver and _save attributes).
      sbcl: SbclInfo of the toolchain.
      out: File, the executable to save.
      arguments: list of strings after the save command's OUT and before the fasls.
      fasls: list of File, loaded in order.
      mnemonic: the action's mnemonic.
      progress_message: the action's progress message.
    """
    driver = ctx.file._driver
    args = ctx.actions.args()
    args.add_all([
        out,
        sbcl.sbcl,
        sbcl.core,
        driver,
        sbcl.emulator.path if sbcl.emulator else "",
        sbcl.sysroot,
        "--",
    ])

    # save.sh copies the driver to driver.lisp and renames the output "saved".
    args.add_all(_driver_arguments(driver.path, "driver.lisp", "save", _SAVED_HEAP) + ["saved"] + arguments)
    args.add("--")
    args.add_all(fasls)
    tools = [sbcl.emulator] if sbcl.emulator else []
    ctx.actions.run(
        executable = ctx.executable._save,
        arguments = [args],
        inputs = depset([driver] + fasls, transitive = [sbcl.files]),
        tools = tools,
        outputs = [out],
        env = _environment(sbcl),
        mnemonic = mnemonic,
        progress_message = progress_message,
        # Saving never needs the network.
        execution_requirements = {"block-network": "1"},
    )

def run_script(ctx, sbcl, script, arguments, inputs, outputs, mnemonic, progress_message):
    """Registers one action that runs `sbcl --script SCRIPT ARGUMENTS...` in the toolchain's SBCL.

    For checks that do not depend on the target CPU: callers run it with a native toolchain only.

    Args:
      ctx: the rule context.
      sbcl: SbclInfo of the toolchain (not an emulated one).
      script: File, the Lisp script.
      arguments: list of strings after the script.
      inputs: depset of File the script reads.
      outputs: list of File.
      mnemonic: the action's mnemonic.
      progress_message: the action's progress message.
    """
    if sbcl.emulator:
        fail("run_script needs a native SBCL; %s's runs under an emulator" % ctx.label)
    ctx.actions.run(
        executable = sbcl.sbcl,
        arguments = ["--core", sbcl.core.path, "--script", script.path] + arguments,
        inputs = depset([script], transitive = [inputs, sbcl.files]),
        outputs = outputs,
        env = _environment(sbcl),
        mnemonic = mnemonic,
        progress_message = progress_message,
        execution_requirements = {"block-network": "1"},
    )

def requires_arg(requires):
    """The driver's REQUIRES argument for a depset or list of module names."""
    names = requires.to_list() if type(requires) == "depset" else requires
    return ",".join(names) if names else "-"
