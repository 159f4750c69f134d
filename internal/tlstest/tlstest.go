// Package tlstest gives tests what they need to run the programs of this
// repository over TLS: the files of the test credentials
// (//tools/testcerts:credentials), the environment under which the Lisp
// programs load the pinned libssl, and a check that a running server mapped
// that libssl and not another one.
package tlstest

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/grpcbench/grpcbench/go/tlsflags"
	"github.com/grpcbench/grpcbench/internal/runfile"
)

// ServerName is a name in the test server certificate: the one gRPC's
// interop clients are told to expect (-server_host_override). The
// certificate also names localhost, 127.0.0.1 and ::1.
const ServerName = "foo.test.google.fr"

// Setup locates the credentials and the pinned libssl from the
// rlocations a BUILD file passes: the credentials' ca.pem, and libssl.so.3.
type Setup struct {
	dir    string // the credentials' directory
	libDir string // the runfiles directory of libssl.so.3
	libssl string // libssl.so.3, symlinks resolved
}

// New resolves caRlocation and libsslRlocation.
func New(caRlocation, libsslRlocation string) (*Setup, error) {
	if caRlocation == "" || libsslRlocation == "" {
		return nil, fmt.Errorf("tlstest: the credentials' ca.pem and libssl.so.3 are both needed")
	}
	lib := runfile.Path(libsslRlocation)
	resolved, err := filepath.EvalSymlinks(lib)
	if err != nil {
		return nil, err
	}
	return &Setup{dir: filepath.Dir(runfile.Path(caRlocation)), libDir: filepath.Dir(lib), libssl: resolved}, nil
}

// File is the path of one credentials file: ca.pem, server.pem,
// server.key, client.pem, client.key, other_ca.pem, other_client.pem or
// other_client.key.
func (s *Setup) File(name string) string { return filepath.Join(s.dir, name) }

// LispEnv is this process's environment with LD_LIBRARY_PATH naming the
// pinned libssl's directory: the Lisp programs open libssl.so.3 by name,
// and the dynamic linker looks there first.
func (s *Setup) LispEnv() []string {
	return append(os.Environ(), "LD_LIBRARY_PATH="+s.libDir)
}

// CheckLibssl returns an error unless process pid has the pinned libssl
// mapped, and no other.
func (s *Setup) CheckLibssl(pid int) error {
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return err
	}
	seen := false
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) != 6 || !strings.HasSuffix(f[5], "/libssl.so.3") {
			continue
		}
		if f[5] != s.libssl {
			return fmt.Errorf("process %d mapped %s, want only the pinned %s", pid, f[5], s.libssl)
		}
		seen = true
	}
	if !seen {
		return fmt.Errorf("process %d has no libssl.so.3 mapped, want the pinned %s", pid, s.libssl)
	}
	return nil
}

// ClientConfig is a Go TLS client configuration that trusts the test CA,
// expects ServerName, and presents the key pair base (client or
// other_client) if given.
func (s *Setup) ClientConfig(base string) (*tls.Config, error) {
	roots, err := tlsflags.CertPool(s.File("ca.pem"))
	if err != nil {
		return nil, err
	}
	config := &tls.Config{RootCAs: roots, ServerName: ServerName}
	if base != "" {
		pair, err := tls.LoadX509KeyPair(s.File(base+".pem"), s.File(base+".key"))
		if err != nil {
			return nil, err
		}
		config.Certificates = []tls.Certificate{pair}
	}
	return config, nil
}
