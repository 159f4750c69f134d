"""Analysis tests: how a library is compiled, and what its compile action reads.

lisp_library compiles all of its files in one action, in the order of srcs, loading each fasl before
the next file. These tests inspect the actions: one per library, sources in order, fasls out in the
same order; it reads only its own sources and its dependencies' fasls, so an edit to a dependent
library cannot invalidate it, while a library after an edited one reads the edited one's fasls.
"""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")

def _compile_actions(env):
    return [a for a in analysistest.target_actions(env) if a.mnemonic == "LispCompile"]

def _sources_in_order(action):
    """The base names of the sources the action compiles, in order.

    argv: ... --end-toplevel-options compile REQUIRES N (OUT SRC NAME)... FASL...
    """
    argv = action.argv
    i = argv.index("compile")
    n = int(argv[i + 2])
    return [argv[i + 3 + 3 * k + 1].split("/")[-1] for k in range(n)]

def _inputs(action):
    return sorted([
        f.basename
        for f in action.inputs.to_list()
        # The toolchain's own files (SBCL's contribs) are the same for every action.
        if f.extension in ("lisp", "fasl") and not f.path.startswith("external/")
    ])

def _chain_order_test_impl(ctx):
    env = analysistest.begin(ctx)
    actions = _compile_actions(env)
    asserts.equals(env, 1, len(actions), "one compile action per library")
    action = actions[0]
    asserts.equals(env, ["chain_a.lisp", "chain_b.lisp", "chain_c.lisp"], _sources_in_order(action))
    asserts.equals(env, ["chain_a.fasl", "chain_b.fasl", "chain_c.fasl"], [f.basename for f in action.outputs.to_list()])
    asserts.equals(env, ["chain_a.lisp", "chain_b.lisp", "chain_c.lisp", "driver.lisp"], _inputs(action))
    return analysistest.end(env)

chain_order_test = analysistest.make(_chain_order_test_impl)

def _dependent_test_impl(ctx):
    env = analysistest.begin(ctx)
    actions = _compile_actions(env)
    asserts.equals(env, 1, len(actions))
    asserts.equals(
        env,
        ["chain_a.fasl", "chain_b.fasl", "chain_c.fasl", "chain_user.lisp", "driver.lisp"],
        _inputs(actions[0]),
    )
    return analysistest.end(env)

dependent_test = analysistest.make(_dependent_test_impl)
