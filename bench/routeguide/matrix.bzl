"""The RouteGuide matrix: {Go, Lisp} server x {Go, Lisp} client, as benchmark() targets."""

load("//tools/bench:defs.bzl", "benchmark")

# The servers, started by the load generator on loopback (-server PATH -> PATH -addr 127.0.0.1:0).
SERVERS = {
    "go": "//go/routeguide/server",
    "lisp": "//lisp/routeguide:server",
}

# The load generator: it starts the servers, measures, and computes and writes every result, whichever
# client makes the calls.
LOADGEN = "//go/routeguide/loadgen"

# The clients, as the extra tools the load generator gets for each: none for grpc-go in its own
# process; for the Lisp client, the program that makes the calls with clgrpc, which the load
# generator starts on its CPUs and drives over a pipe. The client is recorded in the parameter
# "client".
CLIENTS = {
    "go": {},
    "lisp": {"//lisp/routeguide:loadgen": "-lisp_client"},
}

# What a TLS benchmark reads: the test credentials (the servers' certificate names 127.0.0.1) and
# the pinned libssl the Lisp server loads, for the CPU the benchmark runs on.
TLS_FILES = select({
    "@platforms//cpu:aarch64": {
        "//tools/testcerts:ca.pem": "-tls_ca_file",
        "//tools/testcerts:server.key": "-tls_key_file",
        "//tools/testcerts:server.pem": "-tls_cert_file",
        "@openssl_linux_arm64//:libssl": "-libssl",
    },
    "//conditions:default": {
        "//tools/testcerts:ca.pem": "-tls_ca_file",
        "//tools/testcerts:server.key": "-tls_key_file",
        "//tools/testcerts:server.pem": "-tls_cert_file",
        "@openssl_linux_amd64//:libssl": "-libssl",
    },
})

# Each client's benchmark measures both servers in one action, in turns repetition by repetition
# (-rival), so that the two cells of a Lisp/Go ratio see the same machine at the same time.
def _interleaved(name, client):
    return "%s_%s_servers_%s_client" % (name, "_and_".join(SERVERS.keys()), client)

def matrix_results(name):
    """The results targets of routeguide_matrix(name), the Go client's first.

    Args:
      name: the matrix's name.

    Returns:
      the labels of the NAME_*_results targets of this package.
    """
    return ["//bench/routeguide:%s_results" % _interleaved(name, client) for client in CLIENTS]

def routeguide_matrix(name, args, tuned = False, **kwargs):
    """The benchmarks of one grid: NAME_go_and_lisp_servers_{go,lisp}_client (and _results).

    Each measures both servers, in turns, with one load generator.

    Args:
      name: the prefix of the targets.
      args: the pinned load generator flags (-clients, -duration, -reps, -warmup, ...).
      tuned: also measure the TUNED servers, in the same turns, in the Go client's benchmark.
      **kwargs: common attributes (tags, visibility).
    """
    first, rival = SERVERS.keys()
    for client, client_tools in CLIENTS.items():
        tools = {SERVERS[first]: "-server", SERVERS[rival]: "-rival"}
        tools.update(client_tools)
        variants = tuned_variants() if tuned and client == "go" else []
        benchmark(
            name = _interleaved(name, client),
            args = args + ["-impl=" + first, "-rival_impl=" + rival] + variants,
            binary = LOADGEN,
            tools = tools,
            **kwargs
        )

# Tuned variants, reported beside the defaults and labelled as tuned: judged against each other,
# never against a default. Each is a server's binary with its tuning flags, measured in the same
# turns as the defaults by the Go load generator (the goals' client) and recorded under the label
# SERVER_tuned. go/routeguide/reportlayout's tunedPoint describes them.
TUNED = {
    # Streams served by long-lived goroutines instead of a goroutine each, which saves growing a
    # fresh stack per call (about an eighth of the server's CPU in its profiles); 64 KiB read and
    # write buffers instead of 32, the write buffer given back after each flush
    # (grpc.SharedWriteBuffer); and a collector that lets the heap grow to five times what is live.
    # The buffers took a further 2% to 18% off its CPU per request, less in every cell of the grid
    # measured (unary, server and bidi streaming at 10 and 100 clients, 8 rounds of 1 s).
    "go": [
        "-num_stream_workers=4",
        "-read_buffer_size=65536",
        "-write_buffer_size=65536",
        "-shared_write_buffer",
        "-gc_percent=400",
    ],
    # GetFeature on the connection's reactor thread instead of a worker (clgrpc's :unary-inline).
    "lisp": ["-unary_inline"],
}

def tuned_variants():
    """The load generator's -variant flags for the TUNED servers.

    Returns:
      a list of -variant=SERVER_tuned=SERVER:ARGS flags.
    """
    return ["-variant=%s_tuned=%s:%s" % (server, server, " ".join(args)) for server, args in TUNED.items()]

def _go_client_grid(name, args, **kwargs):
    """Both servers in turns with the Go client: NAME_go_and_lisp_servers_go_client (and _results)."""
    first, rival = SERVERS.keys()
    benchmark(
        name = _interleaved(name, "go"),
        args = args + ["-impl=" + first, "-rival_impl=" + rival],
        binary = LOADGEN,
        tools = {SERVERS[first]: "-server", SERVERS[rival]: "-rival"},
        **kwargs
    )

def go_client_results(name):
    """The Go client's results target of routeguide_matrix(name).

    Args:
      name: the matrix's name.

    Returns:
      the label of its NAME_go_and_lisp_servers_go_client_results target.
    """
    return ["//bench/routeguide:%s_results" % _interleaved(name, "go")]

def tls_results(name):
    """The results target of routeguide_tls(name).

    Args:
      name: the TLS grid's name.

    Returns:
      the label of its NAME_go_and_lisp_servers_go_client_results target.
    """
    return go_client_results(name)

def routeguide_tls(name, args, **kwargs):
    """The grid over TLS: NAME_go_and_lisp_servers_go_client (and _results).

    Both servers in turns, as the matrix measures them, each started with -tls and the test
    credentials; the Go client makes the calls (the Lisp load generator speaks plaintext only).
    Scenarios are named .../tls.

    Args:
      name: the prefix of the targets.
      args: the pinned load generator flags, as the matrix's.
      **kwargs: common attributes (tags, visibility).
    """
    _go_client_grid(name, args + ["-tls"], files = TLS_FILES, **kwargs)

def capped_results(name):
    """The results target of routeguide_capped(name).

    Args:
      name: the capped grid's name.

    Returns:
      the label of its NAME_go_and_lisp_servers_go_client_results target.
    """
    return go_client_results(name)

def routeguide_capped(name, args, cores, **kwargs):
    """The grid with each server held to a CPU quota: NAME_go_and_lisp_servers_go_client.

    Both servers in turns, as the matrix measures them, each capped at CORES of CPU time by a cgroup
    quota (the load generator's -server_cpu_quota; it needs root), while the Go load generator keeps
    a whole core: the servers, not the load generator, then set the figures. Results go to the suite
    routeguide_capped, which judges throughput and CPU per request only, since throttling distorts
    latency.

    Args:
      name: the prefix of the targets.
      args: the pinned load generator flags, as the matrix's.
      cores: the quota, in cores (a string, such as "0.25").
      **kwargs: common attributes (tags, visibility).
    """
    _go_client_grid(name, args + ["-server_cpu_quota=" + cores], **kwargs)

def quota_sweep_results(name):
    """The results target of routeguide_quota_sweep(name).

    Args:
      name: the sweep's name.

    Returns:
      the label of its NAME_go_and_lisp_servers_go_client_results target.
    """
    return go_client_results(name)

def routeguide_quota_sweep(name, args, cores, periods, **kwargs):
    """The grid at several CPU quotas: NAME_go_and_lisp_servers_go_client (and _results).

    Both servers, and the TUNED ones, in turns, as the matrix measures them, at each quota in CORES
    (0 for uncapped) and each CFS period in PERIODS, each point on servers started afresh, born in
    control groups holding it (the load generator's -server_cpu_quota and -server_cpu_period; it
    needs root). Results go to the suite routeguide_quota, which shows the points side by side and
    judges each capped one, and their geometric mean.

    Args:
      name: the prefix of the targets.
      args: the pinned load generator flags, as the matrix's.
      cores: the quotas, in cores (strings, such as "0.25"; "0" for uncapped).
      periods: the CFS periods (strings, such as "10ms").
      **kwargs: common attributes (tags, visibility).
    """
    _go_client_grid(
        name,
        args + tuned_variants() + [
            "-server_cpu_quota=" + ",".join(cores),
            "-server_cpu_period=" + ",".join(periods),
        ],
        **kwargs
    )

def shared_results(name):
    """The results target of routeguide_shared(name).

    Args:
      name: the grid's name.

    Returns:
      the label of its NAME_go_and_lisp_servers_go_client_results target.
    """
    return go_client_results(name)

def routeguide_shared(name, args, **kwargs):
    """The grid with every client's calls on one connection: NAME_go_and_lisp_servers_go_client.

    Both servers, and the TUNED ones, in turns, as the matrix measures them, with the load
    generator's -conns shared: many streams on one HTTP/2 connection. Results go to the suite
    routeguide_shared, scenarios .../conns=shared.

    Args:
      name: the prefix of the targets.
      args: the pinned load generator flags, as the matrix's.
      **kwargs: common attributes (tags, visibility).
    """
    _go_client_grid(name, args + tuned_variants() + ["-conns=shared"], **kwargs)
