"""Analysis tests of lisp_proto_library: what it generates and what its compile action reads."""

load("@bazel_skylib//lib:paths.bzl", "paths")
load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts", "unittest")
load("//lisp/bazel/private:proto.bzl", "relative_path")

def _actions(env, mnemonic):
    return [a for a in analysistest.target_actions(env) if a.mnemonic == mnemonic]

def _generated_file_test_impl(ctx):
    env = analysistest.begin(ctx)
    merges = _actions(env, "LispProtoDescriptorSet")
    asserts.equals(env, 1, len(merges), "one action merges the descriptor sets")
    merged = merges[0].outputs.to_list()[0]

    # greeting.proto imports stamp.proto: both proto_library descriptor sets are merged.
    asserts.equals(
        env,
        ["greeting_proto-descriptor-set.proto.bin", "stamp_proto-descriptor-set.proto.bin"],
        sorted([f.basename for f in merges[0].inputs.to_list() if f.extension == "bin"]),
    )

    writes = _actions(env, "FileWrite")
    asserts.equals(env, 1, len(writes), "one generated source")
    source = writes[0].outputs.to_list()[0]
    content = writes[0].content
    asserts.true(env, '(defpackage "LISPRULETEST.PROTO"' in content, content)
    asserts.true(env, '(in-package "LISPRULETEST.PROTO")' in content, content)

    # The file names the merged set relative to itself, as clgrpc resolves it.
    relative = relative_path(source.dirname, merged.path)
    asserts.equals(env, merged.path, paths.normalize(paths.join(source.dirname, relative)))
    for macro in [
        "clgrpc.protobuf:define-messages-from-descriptor-set",
        "clgrpc.codegen:define-services-from-descriptor-set",
    ]:
        asserts.true(env, '(%s "%s" :export t)' % (macro, relative) in content, content)

    # The compile action of that file reads the merged set.
    compiles = _actions(env, "LispCompile")
    asserts.equals(env, 1, len(compiles), "one compile action")
    asserts.true(env, merged in compiles[0].inputs.to_list(), "the descriptor set is a compile input")
    asserts.true(env, source in compiles[0].inputs.to_list(), "the generated file is compiled")
    return analysistest.end(env)

generated_file_test = analysistest.make(_generated_file_test_impl)

def _messages_only_test_impl(ctx):
    env = analysistest.begin(ctx)
    content = _actions(env, "FileWrite")[0].content
    asserts.true(env, "define-messages-from-descriptor-set" in content, content)
    asserts.false(env, "define-services-from-descriptor-set" in content, "services = False: no stubs")

    # A proto_library without imports needs no merging: its own set is read.
    asserts.equals(env, [], _actions(env, "LispProtoDescriptorSet"))
    return analysistest.end(env)

messages_only_test = analysistest.make(_messages_only_test_impl)

def _relative_path_test_impl(ctx):
    env = unittest.begin(ctx)
    asserts.equals(env, "x.bin", relative_path("a/b", "a/b/x.bin"))
    asserts.equals(env, "../../p/q/x.bin", relative_path("bin/l/r", "bin/p/q/x.bin"))
    asserts.equals(env, "c/x.bin", relative_path("a/b", "a/b/c/x.bin"))
    asserts.equals(env, "../../../../y/x.bin", relative_path("o/a/b/c", "y/x.bin"))
    return unittest.end(env)

relative_path_test = unittest.make(_relative_path_test_impl)
