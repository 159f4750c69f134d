package interop_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/internal/runfile"
)

var (
	tlsCredentials = flag.String("tls_credentials", "",
		"rlocation of ca.pem of //tools/testcerts:credentials: run over TLS with those credentials")
	libssl = flag.String("libssl", "",
		"rlocation of the pinned libssl.so.3, which the Lisp programs load over TLS")
)

// testServerName is a name in the test server certificate, the one gRPC's
// interop clients are told to expect (-server_host_override).
const testServerName = "foo.test.google.fr"

// security is what the programs of a test need for the transport under
// test: nothing for plaintext.
type security struct {
	serverArgs []string // interop server flags (grpc-go's names)
	clientArgs []string // interop client flags (grpc-go's names)
	env        []string // the environment of Lisp programs (nil: this process's)
	libssl     string   // the pinned libssl.so.3, resolved
}

// credential is the path of one file of //tools/testcerts:credentials.
func credential(name string) string {
	return filepath.Join(filepath.Dir(runfile.Path(*tlsCredentials)), name)
}

func transport(t *testing.T) security {
	t.Helper()
	if *tlsCredentials == "" {
		return security{}
	}
	if *libssl == "" {
		t.Fatal("-tls_credentials needs -libssl")
	}
	lib, err := filepath.EvalSymlinks(runfile.Path(*libssl))
	if err != nil {
		t.Fatal(err)
	}
	return security{
		serverArgs: []string{"-use_tls", "-tls_cert_file", credential("server.pem"), "-tls_key_file", credential("server.key")},
		clientArgs: []string{"-use_tls", "-use_test_ca", "-ca_file", credential("ca.pem"), "-server_host_override", testServerName},
		// The Lisp programs open libssl.so.3 by name: the dynamic linker
		// looks on LD_LIBRARY_PATH first.
		env:    append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Dir(runfile.Path(*libssl))),
		libssl: lib,
	}
}

// checkLibssl fails the test unless the Lisp server p, started over TLS,
// has the pinned libssl mapped, not another one the host has.
func (s security) checkLibssl(t *testing.T, p *serverproc.Process) {
	t.Helper()
	if s.libssl == "" {
		return
	}
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", p.PID()))
	if err != nil {
		t.Fatal(err)
	}
	var mapped []string
	for _, line := range strings.Split(string(maps), "\n") {
		if f := strings.Fields(line); len(f) == 6 && strings.HasSuffix(f[5], "/libssl.so.3") {
			mapped = append(mapped, f[5])
		}
	}
	for _, m := range mapped {
		if m != s.libssl {
			t.Fatalf("the server mapped %s, want only the pinned %s", m, s.libssl)
		}
	}
	if len(mapped) == 0 {
		t.Fatalf("the server has no libssl.so.3 mapped, want the pinned %s", s.libssl)
	}
}
