// bb_runner: executes each action's command in its directory under the worker's build directory,
// as the user that started it (no chroot, no root): actions see this machine's /bin, /usr, ...
local common = import 'common.libsonnet';

{
  buildDirectoryPath: common.state + '/worker/build',
  grpcServers: [{
    listenPaths: [common.state + '/runner.sock'],
    authenticationPolicy: { allow: {} },
  }],
  // Each action gets its own TMPDIR inside the build directory, removed with it.
  setTmpdirEnvironmentVariable: true,
}
