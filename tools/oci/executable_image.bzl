"""One executable as a container image for linux/amd64 and linux/arm64, with its push and test.

    load("//tools/oci:executable_image.bzl", "executable_image")

    executable_image(
        name = "worker",
        executable = "//go/qps:worker",
        title = "grpcbench qps worker (grpc-go)",
        repository = "grpcbench/qps-worker-go",
    )

declares NAME_layer (the executable at /usr/local/bin/NAME), NAME_image, NAME_index (both CPUs),
NAME_push and NAME_index_test (the index is well formed and each image's entrypoint is there).
"""

load("@rules_pkg//pkg:tar.bzl", "pkg_tar")
load(":defs.bzl", "oci_image", "oci_image_index", "oci_image_test", "oci_push")

def executable_image(name, executable, title, repository, base = None, exposed_ports = ["10000"], visibility = None):
    """The image of one executable, run as an unprivileged user.

    Args:
      name: the prefix of the targets, and the executable's name in the image.
      executable: the executable's label; its file must be named NAME.
      title: the image's org.opencontainers.image.title label.
      repository: the repository oci_push pushes NAME_index to.
      base: an oci_image to build on (a loader and libraries), or None for scratch.
      exposed_ports: the ports the image declares.
      visibility: of NAME_index.
    """
    entrypoint = ["/usr/local/bin/" + name]
    pkg_tar(
        name = name + "_layer",
        srcs = [executable],
        mode = "0755",
        package_dir = "/usr/local/bin",
    )
    oci_image(
        name = name + "_image",
        base = base,
        entrypoint = entrypoint,
        exposed_ports = exposed_ports,
        labels = {
            "org.opencontainers.image.source": "https://github.com/grpcbench/grpcbench",
            "org.opencontainers.image.title": title,
        },
        tars = [":" + name + "_layer"],
        user = "65532:65532",
    )
    oci_image_index(
        name = name + "_index",
        image = ":" + name + "_image",
        visibility = visibility,
    )
    oci_push(
        name = name + "_push",
        image = ":" + name + "_index",
        repository = repository,
    )
    oci_image_test(
        name = name + "_index_test",
        entrypoint = entrypoint,
        image = ":" + name + "_index",
    )
