package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/grpcbench/grpcbench/go/tlsflags"
)

// transport is how the load generator reaches the servers: plaintext, or
// TLS (-tls) with the started servers given a certificate.
type transport struct {
	on       bool
	caFile   string // the CA that signed the servers' certificate
	certFile string // the started servers' certificate chain (-cert_file)
	keyFile  string // and key (-key_file)
	libssl   string // the libssl.so.3 the started servers load (Lisp)
	config   *tls.Config
}

func (t *transport) register(fs *flag.FlagSet) {
	fs.BoolVar(&t.on, "tls", false, "connect over TLS (ALPN h2), and start the servers with -tls -cert_file -key_file; scenarios are named .../tls")
	fs.StringVar(&t.caFile, "tls_ca_file", "", "with -tls: the `file` of CA certificates (PEM) that verify the servers, whose certificate must name 127.0.0.1")
	fs.StringVar(&t.certFile, "tls_cert_file", "", "with -tls: the certificate chain `file` (PEM) given to the started servers")
	fs.StringVar(&t.keyFile, "tls_key_file", "", "with -tls: the private key `file` (PEM) given to the started servers")
	fs.StringVar(&t.libssl, "libssl", "", "with -tls: the libssl.so.3 `file` the started servers load (their LD_LIBRARY_PATH is its directory; the Lisp server needs OpenSSL 3)")
}

// complete checks the TLS flags and loads the CA.
func (t *transport) complete(startsServers, lispClient bool) error {
	if !t.on {
		if t.caFile != "" || t.certFile != "" || t.keyFile != "" || t.libssl != "" {
			return errors.New("-tls_ca_file, -tls_cert_file, -tls_key_file and -libssl need -tls")
		}
		return nil
	}
	var errs []error
	if t.caFile == "" {
		errs = append(errs, errors.New("-tls needs -tls_ca_file"))
	}
	if startsServers && (t.certFile == "" || t.keyFile == "") {
		errs = append(errs, errors.New("-tls with -server needs -tls_cert_file and -tls_key_file"))
	}
	if lispClient {
		errs = append(errs, errors.New("-tls with -lisp_client: the Lisp load generator speaks plaintext only"))
	}
	if t.caFile != "" {
		roots, err := tlsflags.CertPool(t.caFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("-tls_ca_file: %w", err))
		}
		t.config = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	return errors.Join(errs...)
}

// creds are the clients' transport credentials.
func (t *transport) creds() credentials.TransportCredentials {
	if !t.on {
		return insecure.NewCredentials()
	}
	return credentials.NewTLS(t.config.Clone())
}

// serverArgs are the flags every started server gets.
func (t *transport) serverArgs() []string {
	if !t.on {
		return nil
	}
	return []string{"-tls", "-cert_file", t.certFile, "-key_file", t.keyFile}
}

// serverEnv is the started servers' environment (nil: this process's).
func (t *transport) serverEnv() []string {
	if !t.on || t.libssl == "" {
		return nil
	}
	return append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Dir(t.libssl))
}

// name is the scenario name's suffix, and the "transport" parameter.
func (t *transport) name() string {
	if t.on {
		return "tls"
	}
	return "plaintext"
}

// secure wraps an idle connection in TLS (ALPN h2) and completes the
// handshake by deadline; plaintext connections are returned as they are.
func (t *transport) secure(c net.Conn, deadline time.Time) (net.Conn, error) {
	if !t.on {
		return c, nil
	}
	config := t.config.Clone()
	config.NextProtos = []string{"h2"}
	// As grpc-go's credentials do: the name to verify is the dialled host
	// (a loopback IP, which the certificate must carry).
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return nil, err
	}
	config.ServerName = host
	s := tls.Client(c, config)
	if err := s.SetDeadline(deadline); err != nil {
		return nil, err
	}
	if err := s.Handshake(); err != nil {
		return nil, err
	}
	return s, s.SetDeadline(time.Time{})
}
