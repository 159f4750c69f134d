"""The OCI os/architecture of the platform a target is built for."""

# OCI architecture names by @platforms CPU constraint.
_CPUS = {
    "amd64": Label("@platforms//cpu:x86_64"),
    "arm64": Label("@platforms//cpu:aarch64"),
}

PLATFORM_ATTRS = {
    "_cpu_" + arch: attr.label(default = cpu, providers = [platform_common.ConstraintValueInfo])
    for arch, cpu in _CPUS.items()
} | {
    "_os_linux": attr.label(
        default = Label("@platforms//os:linux"),
        providers = [platform_common.ConstraintValueInfo],
    ),
}

def oci_platform(ctx):
    """Returns (os, architecture) for the target platform, failing if images are not supported.

    Args:
      ctx: a context of a rule with PLATFORM_ATTRS.

    Returns:
      a tuple of OCI names, e.g. ("linux", "arm64").
    """
    if not ctx.target_platform_has_constraint(ctx.attr._os_linux[platform_common.ConstraintValueInfo]):
        fail("%s: images are built for Linux platforms only" % ctx.label)
    for arch in _CPUS:
        cpu = getattr(ctx.attr, "_cpu_" + arch)[platform_common.ConstraintValueInfo]
        if ctx.target_platform_has_constraint(cpu):
            return ("linux", arch)
    fail("%s: no OCI architecture for the target CPU; known: %s" % (ctx.label, ", ".join(_CPUS)))
