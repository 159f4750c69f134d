// bb_worker: takes actions from the scheduler, materializes their input roots natively (hard links
// from a local file cache, no FUSE) under the state directory, has bb_runner execute them, and
// uploads the outputs to bb_storage.
local common = import 'common.libsonnet';

{
  blobstore: {
    contentAddressableStorage: { grpc: common.grpcClient(common.ports.storage) },
    actionCache: { grpc: common.grpcClient(common.ports.storage) },
  },
  browserUrl: 'http://127.0.0.1:%d' % common.ports.schedulerAdmin,
  maximumMessageSizeBytes: common.maximumMessageSizeBytes,
  scheduler: common.grpcClient(common.ports.schedulerWorker),
  buildDirectories: [{
    native: {
      // Both on one file system: inputs are hard-linked from the cache into the build directory.
      buildDirectoryPath: common.state + '/worker/build',
      cacheDirectoryPath: common.state + '/worker/cache',
      maximumCacheFileCount: 100000,
      maximumCacheSizeBytes: 8 * 1024 * 1024 * 1024,
      cacheReplacementPolicy: 'LEAST_RECENTLY_USED',
    },
    runners: [{
      endpoint: { address: 'unix://%s/runner.sock' % common.state },
      // Actions at once. The workerId has no 'thread' key: with concurrency above 1 every
      // thread would claim the same id.
      concurrency: std.parseInt(std.extVar('RBE_CONCURRENCY')),
      instanceNamePrefix: '',
      platform: common.platform,
      workerId: { host: 'localhost', worker: 'rbe-local' },
    }],
  }],
  filePool: {
    blockDevice: { file: { path: common.state + '/worker/filepool', sizeBytes: 4 * 1024 * 1024 * 1024 } },
  },
  inputDownloadConcurrency: 10,
  outputUploadConcurrency: 11,
  directoryCache: {
    maximumCount: 10000,
    maximumSizeBytes: 64 * 1024 * 1024,
    cacheReplacementPolicy: 'LEAST_RECENTLY_USED',
  },
}
