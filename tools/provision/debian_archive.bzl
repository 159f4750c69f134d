"""debian_archive: a repository made of Debian packages, unpacked, each checked by its sha256."""

def _debian_archive_impl(rctx):
    mirror = rctx.attr.mirror.rstrip("/")
    for i, deb in enumerate(rctx.attr.debs):
        path, sha256 = deb.split(" ")
        archive = "_debs/%d.deb" % i
        rctx.download(url = mirror + "/" + path, output = archive, sha256 = sha256)
        rctx.extract(archive, output = "_debs/%d" % i)
        data = [f for f in rctx.path("_debs/%d" % i).readdir() if f.basename.startswith("data.tar")]
        if len(data) != 1:
            fail("%s: expected one data.tar.* member, found %s" % (path, data))
        rctx.extract(data[0], output = "root")
    rctx.delete("_debs")
    rctx.file("BUILD.bazel", rctx.read(rctx.attr.build_file))
    for name, content in rctx.attr.files.items():
        rctx.file(name, content, executable = True)

debian_archive = repository_rule(
    implementation = _debian_archive_impl,
    doc = "Unpacks the data of Debian packages into root/ and adds a BUILD file.",
    attrs = {
        "build_file": attr.label(mandatory = True, allow_single_file = True),
        "debs": attr.string_list(mandatory = True, doc = "'<pool path> <sha256>' per package"),
        "files": attr.string_dict(doc = "extra executable files: name -> content"),
        "mirror": attr.string(mandatory = True, doc = "the Debian archive's base URL"),
    },
)
