// bb_storage: the CAS and the AC, both local block stores in files under the state directory, and
// the Execution service, which it forwards to bb_scheduler. Bazel uses this one endpoint for
// --remote_executor and --remote_cache.
local common = import 'common.libsonnet';

// A local block store in sparse files: blocks are allocated as data arrives. Sizes are generous for
// one CI run (the state directory is deleted by tools/rbe/down).
local localStore(name, sizeBytes, newBlocks) = {
  'local': {
    keyLocationMapInMemory: { entries: 1024 * 1024 },
    keyLocationMapMaximumGetAttempts: 16,
    keyLocationMapMaximumPutAttempts: 64,
    oldBlocks: 8,
    currentBlocks: 24,
    newBlocks: newBlocks,
    blocksOnBlockDevice: {
      source: { file: { path: '%s/storage/%s-blocks' % [common.state, name], sizeBytes: sizeBytes } },
      spareBlocks: 3,
    },
  },
};

{
  grpcServers: [common.grpcServer(common.ports.storage)],
  schedulers: {
    // Every instance name ('' included) executes on the local scheduler.
    '': { endpoint: common.grpcClient(common.ports.schedulerClient) },
  },
  maximumMessageSizeBytes: common.maximumMessageSizeBytes,
  contentAddressableStorage: {
    backend: localStore('cas', 8 * 1024 * 1024 * 1024, 3),
    getAuthorizer: { allow: {} },
    putAuthorizer: { allow: {} },
    findMissingAuthorizer: { allow: {} },
  },
  actionCache: {
    // completenessChecking: an action result is only a hit if all of its outputs are still in the
    // CAS, so Bazel never gets a result it cannot download.
    backend: {
      completenessChecking: {
        // The AC's local store must have newBlocks: 1 (Buildbarn rejects more for a store that is
        // not content addressed: a key may be overwritten).
        backend: localStore('ac', 256 * 1024 * 1024, 1),
        maximumTotalTreeSizeBytes: 64 * 1024 * 1024,
      },
    },
    getAuthorizer: { allow: {} },
    putAuthorizer: { allow: {} },
  },
  executeAuthorizer: { allow: {} },
}
