// Shared settings of the local Buildbarn that tools/rbe/up starts. Everything that differs per run
// comes from the environment (Buildbarn exposes every environment variable to its Jsonnet configs
// through std.extVar): RBE_STATE is the temporary state directory, RBE_PORT_BASE the first of four
// loopback ports.
local base = std.parseInt(std.extVar('RBE_PORT_BASE'));

{
  state: std.extVar('RBE_STATE'),

  ports: {
    // The one endpoint Bazel talks to: CAS, AC and Execution (forwarded to the scheduler).
    storage: base,
    schedulerClient: base + 1,
    schedulerWorker: base + 2,
    // The scheduler's web UI (queues, workers, operations); tools/rbe/up polls it for readiness.
    schedulerAdmin: base + 3,
  },

  // The worker's platform. Bazel's execution platform //platforms:remote_linux_amd64 sends the
  // same exec_properties; the scheduler routes an action only to a worker whose platform equals
  // the action's exactly. Keep both lists in sync, sorted by name.
  platform: {
    properties: [
      { name: 'ISA', value: 'x86-64' },
      { name: 'OSFamily', value: 'linux' },
    ],
  },

  maximumMessageSizeBytes: 16 * 1024 * 1024,

  // Loopback only, no TLS: nothing but this machine can reach the farm.
  grpcServer(port):: {
    listenAddresses: ['127.0.0.1:%d' % port],
    authenticationPolicy: { allow: {} },
  },
  grpcClient(port):: { address: '127.0.0.1:%d' % port },
}
