package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// imageConfig is the --config file that the oci_image rule writes: what the image's config says
// beyond its layers. A nil list keeps the base image's value; an empty one clears it.
type imageConfig struct {
	OS           string            `json:"os"`
	Architecture string            `json:"architecture"`
	Variant      string            `json:"variant"`
	Entrypoint   []string          `json:"entrypoint"`
	Cmd          []string          `json:"cmd"`
	Env          []string          `json:"env"`
	User         string            `json:"user"`
	WorkingDir   string            `json:"workdir"`
	Labels       map[string]string `json:"labels"`
	ExposedPorts []string          `json:"exposed_ports"`
}

func readImageConfig(file string) (*imageConfig, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var c imageConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if c.OS == "" || c.Architecture == "" {
		return nil, fmt.Errorf("%s: os and architecture are required", file)
	}
	return &c, nil
}

// apply writes c over the base image's config cf.
func (c *imageConfig) apply(cf *v1.ConfigFile) {
	cf.OS, cf.Architecture, cf.Variant = c.OS, c.Architecture, c.Variant
	cf.Created = v1.Time{Time: epoch}
	if c.Entrypoint != nil {
		cf.Config.Entrypoint = c.Entrypoint
		// As with Docker: a new entrypoint drops the base's arguments unless new ones are given.
		cf.Config.Cmd = nil
	}
	if c.Cmd != nil {
		cf.Config.Cmd = c.Cmd
	}
	cf.Config.Env = mergeEnv(cf.Config.Env, c.Env)
	if c.User != "" {
		cf.Config.User = c.User
	}
	if c.WorkingDir != "" {
		cf.Config.WorkingDir = c.WorkingDir
	}
	for k, v := range c.Labels {
		if cf.Config.Labels == nil {
			cf.Config.Labels = map[string]string{}
		}
		cf.Config.Labels[k] = v
	}
	for _, p := range c.ExposedPorts {
		if !strings.Contains(p, "/") {
			p += "/tcp"
		}
		if cf.Config.ExposedPorts == nil {
			cf.Config.ExposedPorts = map[string]struct{}{}
		}
		cf.Config.ExposedPorts[p] = struct{}{}
	}
}

// mergeEnv returns base with each KEY=VALUE of add replacing the same key in place, or appended.
func mergeEnv(base, add []string) []string {
	out := append([]string(nil), base...)
	for _, kv := range add {
		key, _, _ := strings.Cut(kv, "=")
		replaced := false
		for i, old := range out {
			if k, _, _ := strings.Cut(old, "="); k == key {
				out[i], replaced = kv, true
			}
		}
		if !replaced {
			out = append(out, kv)
		}
	}
	return out
}
