// Package tlsflags holds the TLS flags of the Go RouteGuide server and client
// (the same names as the Lisp programs': -tls, -cert_file, -key_file,
// -ca_file, -require_client_cert, -server_host_override) and the gRPC
// transport credentials they describe.
package tlsflags

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Server is a server's TLS configuration from its flags.
type Server struct {
	TLS               bool
	CertFile, KeyFile string
	CAFile            string
	RequireClientCert bool
}

// Register adds the server's TLS flags to fs.
func (s *Server) Register(fs *flag.FlagSet) {
	fs.BoolVar(&s.TLS, "tls", false, "serve over TLS (ALPN h2) instead of plaintext")
	fs.StringVar(&s.CertFile, "cert_file", "", "the certificate chain `file` (PEM) for -tls")
	fs.StringVar(&s.KeyFile, "key_file", "", "the private key `file` (PEM) for -tls")
	fs.StringVar(&s.CAFile, "ca_file", "", "verify client certificates against the CA certificates in this `file` (PEM)")
	fs.BoolVar(&s.RequireClientCert, "require_client_cert", false, "refuse clients without a certificate that -ca_file verifies (mutual TLS)")
}

// Credentials are the transport credentials the flags ask for; an error
// says what is missing or wrong.
func (s *Server) Credentials() (credentials.TransportCredentials, error) {
	if !s.TLS {
		if s.CertFile != "" || s.KeyFile != "" || s.CAFile != "" || s.RequireClientCert {
			return nil, errors.New("-cert_file, -key_file, -ca_file and -require_client_cert need -tls")
		}
		return insecure.NewCredentials(), nil
	}
	if s.CertFile == "" || s.KeyFile == "" {
		return nil, errors.New("-tls needs -cert_file and -key_file")
	}
	if s.RequireClientCert && s.CAFile == "" {
		return nil, errors.New("-require_client_cert needs -ca_file")
	}
	pair, err := tls.LoadX509KeyPair(s.CertFile, s.KeyFile)
	if err != nil {
		return nil, err
	}
	config := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	if s.CAFile != "" {
		if config.ClientCAs, err = CertPool(s.CAFile); err != nil {
			return nil, err
		}
		config.ClientAuth = tls.VerifyClientCertIfGiven
		if s.RequireClientCert {
			config.ClientAuth = tls.RequireAndVerifyClientCert
		}
	}
	return credentials.NewTLS(config), nil
}

// Client is a client's TLS configuration from its flags.
type Client struct {
	TLS                bool
	CAFile             string
	CertFile, KeyFile  string
	ServerHostOverride string
}

// Register adds the client's TLS flags to fs.
func (c *Client) Register(fs *flag.FlagSet) {
	fs.BoolVar(&c.TLS, "tls", false, "connect over TLS (ALPN h2) instead of plaintext")
	fs.StringVar(&c.CAFile, "ca_file", "", "verify the server against the CA certificates in this `file` (PEM) instead of the system's")
	fs.StringVar(&c.CertFile, "cert_file", "", "the client's certificate chain `file` (PEM), for mutual TLS")
	fs.StringVar(&c.KeyFile, "key_file", "", "the client's private key `file` (PEM), for mutual TLS")
	fs.StringVar(&c.ServerHostOverride, "server_host_override", "", "the `name` the server's certificate must carry (default: the server's host)")
}

// Credentials are the transport credentials the flags ask for.
func (c *Client) Credentials() (credentials.TransportCredentials, error) {
	if !c.TLS {
		if c.CAFile != "" || c.CertFile != "" || c.KeyFile != "" || c.ServerHostOverride != "" {
			return nil, errors.New("-ca_file, -cert_file, -key_file and -server_host_override need -tls")
		}
		return insecure.NewCredentials(), nil
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, errors.New("-cert_file and -key_file go together")
	}
	config := &tls.Config{ServerName: c.ServerHostOverride, MinVersion: tls.VersionTLS12}
	if c.CAFile != "" {
		var err error
		if config.RootCAs, err = CertPool(c.CAFile); err != nil {
			return nil, err
		}
	}
	if c.CertFile != "" {
		pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, err
		}
		config.Certificates = []tls.Certificate{pair}
	}
	return credentials.NewTLS(config), nil
}

// CertPool is the pool of the PEM certificates in file; an error if it
// holds none.
func CertPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", file)
	}
	return p, nil
}
