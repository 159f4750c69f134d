"""Proto files that exist only as descriptors embedded in linked Go packages."""

load("@com_google_protobuf//bazel:proto_library.bzl", "proto_library")

def go_embedded_proto_library(name, file, import_prefix, deps = [], visibility = None):
    """A proto_library of FILE, printed by //go/cri/apiproto from the Go package that embeds it.

    Upstream modules ship such files, but go_deps makes no Bazel target for them ("gazelle:proto
    disable"), and a copy in this repository could drift from the Go code we link. Printing the
    file from the linked descriptor makes the two the same by construction;
    //go/cri/apiproto:apiproto_test checks that protoc reads back the identical descriptor.

    Args:
      name: the proto_library's name; the printed source is upstream_NAME/BASENAME.
      file: the file's path as the Go package registers it, e.g. "grpc/health/v1/health.proto".
      import_prefix: the directory under which other protos import it.
      deps: the proto_library targets of the files it imports.
      visibility: of the proto_library.
    """
    directory = "upstream_" + name
    src = directory + "/" + file.split("/")[-1]
    native.genrule(
        name = name + "_src",
        outs = [src],
        cmd = "$(execpath //go/cri/apiproto) -file %s > $@" % file,
        tools = ["//go/cri/apiproto"],
    )
    proto_library(
        name = name,
        srcs = [src],
        import_prefix = import_prefix,
        strip_import_prefix = directory,
        deps = deps,
        visibility = visibility,
    )
