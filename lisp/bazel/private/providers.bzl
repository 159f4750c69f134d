"""Providers of the Lisp rules."""

LispInfo = provider(
    doc = "A compiled Lisp library and everything it needs at load time.",
    fields = {
        "fasls": "depset of File: this library's and its dependencies' fasls, in load order",
        "srcs": "depset of File: the sources behind those fasls",
        "requires": "depset of string: SBCL modules (contribs) to require before loading",
    },
)

SbclInfo = provider(
    doc = "An SBCL that runs on the build machine and compiles for one target CPU.",
    fields = {
        "sbcl": "File: the SBCL runtime executable",
        "core": "File: its sbcl.core (contribs are beside it, in SBCL_HOME)",
        "files": "depset of File: everything the runtime loads",
        "emulator": "File or None: runs target executables on the build machine (qemu-user)",
        "sysroot": "string: execroot path of the target root file system the emulator uses, or ''",
        "sysroot_files": "depset of File: the target libraries a saved executable needs under the emulator",
        "library_path": "string: execroot path of extra shared libraries (LD_LIBRARY_PATH), or ''",
        "target_cpu": "string: x86_64 or aarch64",
    },
)

LispExecutableInfo = provider(
    doc = "A saved SBCL executable, with what it takes to run it on the build machine.",
    fields = {
        "executable": "File: the executable made by save-lisp-and-die",
        "sbcl": "SbclInfo: the toolchain it was built with (for its emulator)",
    },
)
