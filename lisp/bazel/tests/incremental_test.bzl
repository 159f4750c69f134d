"""Analysis tests: a one-file edit recompiles only that file and what depends on it.

lisp_library compiles each file in its own action. These tests inspect the actions' inputs: a file's
action must read only the files (and fasls) before it and its dependencies', so an edit to a later
file cannot invalidate it, while everything after an edited file reads the edited file's fasl.
"""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")

def _compile_inputs(env):
    """Maps each compiled source's base name to the base names of its action's inputs."""
    result = {}
    for action in analysistest.target_actions(env):
        if action.mnemonic != "LispCompile":
            continue

        # argv: ... --end-toplevel-options compile OUT SRC NAME REQUIRES FASL...
        argv = action.argv
        src = argv[argv.index("compile") + 2]
        result[src.split("/")[-1]] = sorted([
            f.basename
            for f in action.inputs.to_list()
            # The toolchain's own files (SBCL's contribs) are the same for every action.
            if f.extension in ("lisp", "fasl") and not f.path.startswith("external/")
        ])
    return result

def _chain_order_test_impl(ctx):
    env = analysistest.begin(ctx)
    inputs = _compile_inputs(env)
    asserts.equals(env, ["chain_a.lisp", "chain_b.lisp", "chain_c.lisp"], sorted(inputs.keys()))
    for name in ["chain_a", "chain_b", "chain_c"]:
        asserts.true(env, "driver.lisp" in inputs[name + ".lisp"], "the driver is an input")
    asserts.equals(env, ["chain_a.lisp", "driver.lisp"], inputs["chain_a.lisp"])
    asserts.equals(env, ["chain_a.fasl", "chain_b.lisp", "driver.lisp"], inputs["chain_b.lisp"])
    asserts.equals(env, ["chain_a.fasl", "chain_b.fasl", "chain_c.lisp", "driver.lisp"], inputs["chain_c.lisp"])
    return analysistest.end(env)

chain_order_test = analysistest.make(_chain_order_test_impl)

def _dependent_test_impl(ctx):
    env = analysistest.begin(ctx)
    inputs = _compile_inputs(env)
    asserts.equals(
        env,
        ["chain_a.fasl", "chain_b.fasl", "chain_c.fasl", "chain_user.lisp", "driver.lisp"],
        inputs["chain_user.lisp"],
    )
    return analysistest.end(env)

dependent_test = analysistest.make(_dependent_test_impl)
