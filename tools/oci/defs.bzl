"""OCI container images without a daemon: build, index for several CPUs, push.

    load("//tools/oci:defs.bzl", "oci_image", "oci_image_index", "oci_push")

    pkg_tar(name = "server_layer", srcs = ["//go/routeguide/server"])
    oci_image(name = "server_image", tars = [":server_layer"], entrypoint = ["/server"])
    oci_image_index(name = "server_index", image = ":server_image")   # linux_amd64 + linux_arm64
    oci_push(name = "server_push", image = ":server_index", repository = "grpcbench/server")

Every image is an OCI image layout directory assembled by //tools/oci/cmd/ociassemble (on
go-containerregistry); digests depend only on the contents. See tools/oci/README.md.
"""

load("//tools/oci/private:image.bzl", _oci_image = "oci_image")
load("//tools/oci/private:index.bzl", _oci_image_index = "oci_image_index")
load("//tools/oci/private:push.bzl", _oci_push = "oci_push")
load("//tools/oci/private:rootfs.bzl", _rootfs_tar = "rootfs_tar")
load("//tools/oci/private:test.bzl", _oci_image_test = "oci_image_test")

oci_image = _oci_image
oci_image_index = _oci_image_index
oci_image_test = _oci_image_test
oci_push = _oci_push
rootfs_tar = _rootfs_tar
