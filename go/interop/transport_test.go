package interop_test

import (
	"flag"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/internal/tlstest"
)

var (
	tlsCredentials = flag.String("tls_credentials", "",
		"rlocation of ca.pem of //tools/testcerts:credentials: run over TLS with those credentials")
	libssl = flag.String("libssl", "",
		"rlocation of the pinned libssl.so.3, which the Lisp programs load over TLS")
)

// security is what the programs of a test need for the transport under
// test: nothing for plaintext.
type security struct {
	serverArgs []string // interop server flags (grpc-go's names)
	clientArgs []string // interop client flags (grpc-go's names)
	env        []string // the environment of Lisp programs (nil: this process's)
	setup      *tlstest.Setup
}

func transport(t *testing.T) security {
	t.Helper()
	if *tlsCredentials == "" {
		return security{}
	}
	setup, err := tlstest.New(*tlsCredentials, *libssl)
	if err != nil {
		t.Fatal(err)
	}
	return security{
		serverArgs: []string{"-use_tls", "-tls_cert_file", setup.File("server.pem"), "-tls_key_file", setup.File("server.key")},
		clientArgs: []string{"-use_tls", "-use_test_ca", "-ca_file", setup.File("ca.pem"), "-server_host_override", tlstest.ServerName},
		env:        setup.LispEnv(),
		setup:      setup,
	}
}

// checkLibssl fails the test unless the Lisp server p, started over TLS,
// has the pinned libssl mapped, not another one the host has.
func (s security) checkLibssl(t *testing.T, p *serverproc.Process) {
	t.Helper()
	if s.setup == nil {
		return
	}
	if err := s.setup.CheckLibssl(p.PID()); err != nil {
		t.Fatal(err)
	}
}
