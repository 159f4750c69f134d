"""Checked-in generated files, kept honest by a test.

Some generated files are checked in so that tools outside Bazel work (`go build ./...` needs the
.pb.go files). `checked_in_files` makes a test that fails when a checked-in copy differs from what
the build generates, and a runnable target that copies the generated files over the checked-in ones:

    checked_in_files(
        name = "generated_go",
        srcs = ":routeguide_go_files",   # what the build makes
        files = ["route_guide.pb.go"],   # the checked-in copies, matched by base name
    )

`bazel test :generated_go_test` checks; `bazel run :generated_go` updates.
"""

load("@rules_shell//shell:sh_binary.bzl", "sh_binary")
load("@rules_shell//shell:sh_test.bzl", "sh_test")

def checked_in_files(name, srcs, files, **kwargs):
    """Declares NAME (run: update the checked-in files) and NAME_test (fail if they are stale).

    Args:
      name: name of the update target; the test is NAME_test.
      srcs: a target whose default outputs are the generated files.
      files: the checked-in files of this package, matched to srcs by base name.
      **kwargs: common attributes (tags, visibility) for both targets.
    """
    args = ["$(rootpaths %s)" % srcs, "--"] + ["$(rootpath %s)" % f for f in files]
    sh_test(
        name = name + "_test",
        srcs = [Label("//tools/generated:diff_test.sh")],
        args = args,
        data = [srcs] + files,
        **kwargs
    )
    sh_binary(
        name = name,
        srcs = [Label("//tools/generated:update.sh")],
        args = args,
        data = [srcs] + files,
        **kwargs
    )
