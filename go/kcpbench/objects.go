package main

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The objects are what a real cluster holds, not a one-field toy: the
// ConfigMap is mostly data (an application's config files), where every
// format carries the same strings; the ClusterRole is many small
// structured fields, where the formats differ most. That is the contrast
// WithClientCM and WithClientRBAC draw.

// benchConfigMap is a ConfigMap of about 3 KB of data in 8 keys.
func benchConfigMap(name, namespace string) *corev1.ConfigMap {
	data := map[string]string{
		"application.yaml": "server:\n  port: 8080\n  shutdownTimeout: 30s\nlogging:\n  level: info\n  format: json\n",
		"feature-flags":    "newCheckout=true\nrecommendations=false\nsearchV2=true\ndarkMode=true\n",
		"nginx.conf":       "worker_processes auto;\nevents { worker_connections 1024; }\nhttp {\n  server {\n    listen 80;\n    location / { proxy_pass http://127.0.0.1:8080; }\n  }\n}\n",
		"LOG_LEVEL":        "info",
		"CACHE_TTL":        "300",
	}
	for i := range 3 {
		data[fmt.Sprintf("rules-%d.json", i)] = fmt.Sprintf(`{"id":%d,"match":{"path":"/api/v1/orders","methods":["GET","POST"]},"limit":{"requests":1000,"window":"1m"},"note":"%0640d"}`, i, i)
	}
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: namespace,
			Labels: map[string]string{
				"app.kubernetes.io/name": "checkout", "app.kubernetes.io/part-of": "shop",
				"app.kubernetes.io/managed-by": "kcpbench", "environment": "bench",
			},
			Annotations: map[string]string{
				"kcpbench.grpcbench.dev/purpose": "content-type benchmark",
				"kcpbench.grpcbench.dev/owner":   "platform-team",
			},
		},
		Data: data,
	}
}

// benchClusterRole is an aggregated-style ClusterRole of 10 rules.
func benchClusterRole(name string) *rbacv1.ClusterRole {
	verbsRead := []string{"get", "list", "watch"}
	verbsAll := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	return &rbacv1.ClusterRole{
		TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"rbac.authorization.k8s.io/aggregate-to-edit": "true",
				"app.kubernetes.io/managed-by":                "kcpbench",
			},
			Annotations: map[string]string{"kcpbench.grpcbench.dev/purpose": "content-type benchmark"},
		},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "pods/log", "pods/status"}, Verbs: verbsRead},
			{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets", "serviceaccounts"}, Verbs: verbsAll},
			{APIGroups: []string{""}, Resources: []string{"services", "endpoints", "persistentvolumeclaims"}, Verbs: verbsAll},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets", "daemonsets", "replicasets"}, Verbs: verbsAll},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments/scale", "statefulsets/scale"}, Verbs: []string{"get", "update", "patch"}},
			{APIGroups: []string{"batch"}, Resources: []string{"jobs", "cronjobs"}, Verbs: verbsAll},
			{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses", "networkpolicies"}, Verbs: verbsAll},
			{APIGroups: []string{"autoscaling"}, Resources: []string{"horizontalpodautoscalers"}, Verbs: verbsAll},
			{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: verbsRead},
			{NonResourceURLs: []string{"/healthz", "/readyz", "/livez", "/version"}, Verbs: []string{"get"}},
		},
	}
}
