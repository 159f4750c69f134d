package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/grpcbench/grpcbench/go/bench/cpuset"
	"github.com/grpcbench/grpcbench/go/internal/kcpserver"
)

// kcpServer is a kcp started for the benchmark (go/internal/kcpserver),
// with the benchmark's namespace created.
type kcpServer struct {
	*kcpserver.Server
}

// startKCP runs kcp with featureGates and waits until it is ready and the
// benchmark's namespace exists. dir must be empty or absent.
func startKCP(ctx context.Context, binary, dir, featureGates string, cpus cpuset.Set) (*kcpServer, error) {
	// Before anything of client-go runs: the readiness probe's transport
	// already reads client-go's feature gates (the TLS cache ones).
	enableClientCBOR()
	var extra []string
	if featureGates != "" {
		extra = append(extra, "--feature-gates="+featureGates)
	}
	s, err := kcpserver.Start(ctx, binary, dir, cpus, extra...)
	if err != nil {
		return nil, err
	}
	if err := ensureNamespace(ctx, s.Config, benchNamespace); err != nil {
		s.Stop()
		return nil, fmt.Errorf("kcp: %w (log: %s)", err, s.LogPath())
	}
	return &kcpServer{s}, nil
}

// ensureNamespace creates the namespace the ConfigMaps live in, retrying
// while kcp finishes setting up the root workspace behind /readyz.
func ensureNamespace(ctx context.Context, cfg *rest.Config, name string) error {
	cs, err := newClientset(cfg, mediaJSON)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
		time.Sleep(time.Second)
	}
}
