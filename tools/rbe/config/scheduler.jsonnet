// bb_scheduler: queues actions from bb_storage (client side) and hands them to bb_worker (worker
// side). Its web UI on the admin port shows queues, workers and operations.
local common = import 'common.libsonnet';

{
  clientGrpcServers: [common.grpcServer(common.ports.schedulerClient)],
  workerGrpcServers: [common.grpcServer(common.ports.schedulerWorker)],
  adminHttpServers: [{
    listenAddresses: ['127.0.0.1:%d' % common.ports.schedulerAdmin],
    authenticationPolicy: { allow: {} },
  }],
  browserUrl: 'http://127.0.0.1:%d' % common.ports.schedulerAdmin,
  contentAddressableStorage: { grpc: common.grpcClient(common.ports.storage) },
  maximumMessageSizeBytes: common.maximumMessageSizeBytes,
  executeAuthorizer: { allow: {} },
  modifyDrainsAuthorizer: { allow: {} },
  killOperationsAuthorizer: { allow: {} },
  synchronizeAuthorizer: { allow: {} },
  actionRouter: {
    simple: {
      // The platform is taken from the Action (and the Command, for older clients).
      platformKeyExtractor: { actionAndCommand: {} },
      invocationKeyExtractors: [{ correlatedInvocationsId: {} }, { toolInvocationId: {} }],
      initialSizeClassAnalyzer: {
        defaultExecutionTimeout: '1800s',
        maximumExecutionTimeout: '7200s',
      },
    },
  },
  // Keep the queue while the worker restarts; a build that outlives this without workers fails.
  platformQueueWithNoWorkersTimeout: '900s',
}
