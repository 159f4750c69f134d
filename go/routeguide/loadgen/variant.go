package main

import "github.com/grpcbench/grpcbench/go/bench/variant"

// completeVariants resolves the -variant values (go/bench/variant) against
// the servers labelled by -impl and -rival_impl.
func (cfg *config) completeVariants(values []string, fail func(string, ...any)) {
	var known []variant.Server
	if cfg.serverPath != "" {
		known = append(known, variant.Server{Label: cfg.impl, Path: cfg.serverPath, Args: cfg.serverArgs})
		if cfg.rival.path != "" {
			known = append(known, cfg.rival.variantServer())
		}
	}
	variants, errs := variant.Resolve(values, known, implPattern.MatchString)
	for _, err := range errs {
		fail("%v", err)
	}
	for _, v := range variants {
		cfg.variants = append(cfg.variants, serverSpec{impl: v.Label, path: v.Path, args: v.Args, variant: true})
	}
}

// variantServer is s as go/bench/variant names a server.
func (s serverSpec) variantServer() variant.Server {
	return variant.Server{Label: s.impl, Path: s.path, Args: s.args, Variant: s.variant}
}

// variantServers are cfg.servers() as go/bench/variant names them.
func (cfg config) variantServers() []variant.Server {
	var out []variant.Server
	for _, s := range cfg.servers() {
		out = append(out, s.variantServer())
	}
	return out
}
