"""What module extensions need to fetch pinned Debian packages: the lock's sets and the mirror."""

_LOCK = Label("//tools/provision:artifacts.lock")
_REGISTRY_URL = Label("//tools/provision:registry_url.sh")

def debian_sets(mctx, wanted):
    """Returns {set name: ['<pool path> <sha256>', ...]} for each of WANTED, from artifacts.lock.

    Args:
      mctx: the module context.
      wanted: list of set names; a missing one fails with the command that adds it.

    Returns:
      dict from each wanted set's name to its packages, as debian_archive's `debs` takes them.
    """
    sets = {}
    for line in mctx.read(mctx.path(_LOCK)).splitlines():
        if not line or line.startswith("#"):
            continue
        kind, set_name, _name, _version, sha256, path = line.split("\t")
        if kind == "deb":
            sets.setdefault(set_name, []).append(path + " " + sha256)
    for want in wanted:
        if want not in sets:
            fail("artifacts.lock has no '%s' set; run tools/provision/update_lock.sh" % want)
    return {want: sets[want] for want in wanted}

def debian_mirror(mctx):
    """The Debian mirror's base URL: DEBIAN_MIRROR, else the host's apt sources (registry_url.sh).

    No mirror's host name is written in the repository; the extension that calls this must list
    DEBIAN_MIRROR in its `environ`.

    Args:
      mctx: the module context.

    Returns:
      the base URL (debian_archive strips a trailing slash).
    """
    mirror = mctx.os.environ.get("DEBIAN_MIRROR", "")
    if mirror:
        return mirror
    res = mctx.execute(["bash", str(mctx.path(_REGISTRY_URL)), "deb"])
    if res.return_code != 0:
        fail("cannot locate the Debian mirror: " + res.stderr)
    return res.stdout.strip()
