"""The `testinfra` module extension: grpc/test-infra's LoadTest CRD, from the module in testinfra.lock.

    testinfra = use_extension("//tools/testinfra:extensions.bzl", "testinfra")
    use_repo(testinfra, "grpc_test_infra")

makes @grpc_test_infra//:loadtest_crd.yaml (e2etest.grpc.io/v1 LoadTest, apiextensions.k8s.io/v1).
"""

load("//tools/testinfra/private:testinfra_repository.bzl", "testinfra_repository")

def _testinfra_impl(mctx):
    testinfra_repository(name = "grpc_test_infra")
    return mctx.extension_metadata(reproducible = True)

testinfra = module_extension(
    implementation = _testinfra_impl,
    doc = "grpc/test-infra's LoadTest CRD, pinned in //tools/testinfra:testinfra.lock.",
)
