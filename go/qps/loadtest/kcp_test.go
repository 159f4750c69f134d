package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/grpcbench/grpcbench/go/internal/kcpserver"
	"github.com/grpcbench/grpcbench/internal/runfile"
)

var (
	crdResource      = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	loadTestResource = schema.GroupVersionResource{Group: "e2etest.grpc.io", Version: "v1", Resource: "loadtests"}
	namespaceRes     = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

const testNamespace = "loadtests"

// fromEnv is the runfile the BUILD file names in environment variable name;
// outside Bazel the test skips, saying what to set.
func fromEnv(t *testing.T, name, how string) string {
	t.Helper()
	p := os.Getenv(name)
	switch {
	case p == "" && runfile.UnderBazel():
		t.Fatalf("%s is not set under Bazel; the BUILD file passes it", name)
	case p == "":
		t.Skipf("needs %s: %s", name, how)
	}
	return runfile.Path(p)
}

// shardAdmin is the client config for kcp's root workspace as the
// kubeconfig's shard-admin user: kcp-admin may not create CRDs there.
func shardAdmin(t *testing.T, kubeconfig string) *rest.Config {
	t.Helper()
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := raw.AuthInfos["shard-admin"]; !ok {
		var users []string
		for u := range raw.AuthInfos {
			users = append(users, u)
		}
		t.Fatalf("%s has no shard-admin user (users: %v)", kubeconfig, users)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{
		Context: clientcmdapi.Context{AuthInfo: "shard-admin"},
	}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func decodeYAML(t *testing.T, doc []byte) *unstructured.Unstructured {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal(doc, &obj); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return &unstructured.Unstructured{Object: obj}
}

// installCRD creates test-infra's LoadTest CRD and waits until the API
// server serves LoadTests.
func installCRD(t *testing.T, ctx context.Context, client dynamic.Interface, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	crd := decodeYAML(t, data)
	if _, err := client.Resource(crdResource).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the LoadTest CRD: %v", err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := client.Resource(crdResource).Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err == nil && established(got) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the LoadTest CRD was not established within a minute: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": testNamespace}}}
	if _, err := client.Resource(namespaceRes).Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s: %v", testNamespace, err)
	}
}

func established(crd *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// create creates a LoadTest, retrying while the new resource is not yet
// served (discovery lags the CRD's Established condition by a moment).
func create(ctx context.Context, client dynamic.Interface, obj *unstructured.Unstructured) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := client.Resource(loadTestResource).Namespace(testNamespace).Create(ctx, obj, metav1.CreateOptions{})
		if err == nil || !apierrors.IsNotFound(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The generated LoadTests are valid: a real Kubernetes API server (kcp),
// with grpc/test-infra's own LoadTest CRD installed, accepts every one,
// and refuses LoadTests broken the ways a generator could break them.
func TestLoadTestsPassTheCRDsValidation(t *testing.T) {
	bin := fromEnv(t, "KCP_BINARY", "KCP_BINARY=$(tools/kcp/build)")
	crdPath := fromEnv(t, "LOADTEST_CRD", "LOADTEST_CRD=$(tools/testinfra/fetch)")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := kcpserver.Start(ctx, bin, filepath.Join(t.TempDir(), "kcp"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	client, err := dynamic.NewForConfig(shardAdmin(t, s.Kubeconfig()))
	if err != nil {
		t.Fatal(err)
	}
	installCRD(t, ctx, client, crdPath)

	cfg, err := parseFlags([]string{"-go_image=grpcbench/qps-worker-go:test", "-lisp_image=grpcbench/qps-worker-lisp:test"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := render(cfg)
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Split(stream, []byte("---\n"))
	created := 0
	var first *unstructured.Unstructured
	for _, doc := range docs {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj := decodeYAML(t, doc)
		if err := create(ctx, client, obj); err != nil {
			t.Errorf("the API server refused %s: %v", obj.GetName(), err)
			continue
		}
		if first == nil {
			first = obj
		}
		created++
	}
	if want := 4 * 2 * 4; created != want {
		t.Errorf("%d LoadTests accepted, want %d (4 scenarios x 2 payloads x 4 pairings)", created, want)
	}
	if first == nil {
		t.Fatal("no LoadTest was accepted")
	}

	for _, c := range []struct {
		name  string
		spoil func(o map[string]any)
	}{
		{"a run container without its name", func(o map[string]any) {
			servers := o["spec"].(map[string]any)["servers"].([]any)
			run := servers[0].(map[string]any)["run"].([]any)
			delete(run[0].(map[string]any), "name")
		}},
		{"a string where an integer belongs", func(o map[string]any) {
			o["spec"].(map[string]any)["timeoutSeconds"] = "900"
		}},
		{"no ttlSeconds", func(o map[string]any) {
			delete(o["spec"].(map[string]any), "ttlSeconds")
		}},
	} {
		broken := first.DeepCopy()
		broken.SetName("broken-" + strings.ReplaceAll(strings.ToLower(c.name), " ", "-"))
		c.spoil(broken.Object)
		err := create(ctx, client, broken)
		if !apierrors.IsInvalid(err) {
			t.Errorf("%s: the API server answered %v, want 422 Invalid", c.name, err)
		} else {
			t.Logf("%s: refused: %v", c.name, err)
		}
	}
	t.Logf("%d generated LoadTests accepted with test-infra's CRD installed; the broken ones refused", created)
}
