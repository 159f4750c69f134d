package main

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// benchNamespace holds the ConfigMaps; the benchmark creates it in kcp's
// root workspace.
const benchNamespace = "kcpbench"

// kind is one kind of object the client benchmark creates, reads and
// deletes, named as the prior measurement's benchmarks are
// (docs/prior-results.md).
type kind struct {
	Benchmark string // WithClientCM, WithClientRBAC
	Short     string // cm, rbac (the -objects flag)
	// cycle creates the object called name, gets it and deletes it: one
	// operation of the benchmark, three requests.
	cycle func(ctx context.Context, cs *clientset, name string) error
}

var allKinds = []kind{
	{Benchmark: "WithClientCM", Short: "cm", cycle: cycleConfigMap},
	{Benchmark: "WithClientRBAC", Short: "rbac", cycle: cycleClusterRole},
}

func cycleConfigMap(ctx context.Context, cs *clientset, name string) error {
	cms := cs.CoreV1().ConfigMaps(benchNamespace)
	if _, err := cms.Create(ctx, benchConfigMap(name, benchNamespace), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	if _, err := cms.Get(ctx, name, metav1.GetOptions{}); err != nil {
		return fmt.Errorf("get: %w", err)
	}
	if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	return nil
}

func cycleClusterRole(ctx context.Context, cs *clientset, name string) error {
	crs := cs.RbacV1().ClusterRoles()
	if _, err := crs.Create(ctx, benchClusterRole(name), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	if _, err := crs.Get(ctx, name, metav1.GetOptions{}); err != nil {
		return fmt.Errorf("get: %w", err)
	}
	if err := crs.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	return nil
}
