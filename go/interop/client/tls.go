package main

import (
	"crypto/tls"
	"flag"
	"fmt"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/grpcbench/grpcbench/go/tlsflags"
)

// The TLS flags of grpc-go's interop client.
var (
	useTLS             = flag.Bool("use_tls", false, "connect over TLS")
	useTestCA          = flag.Bool("use_test_ca", false, "verify the server against -ca_file instead of the system's CA certificates")
	caFile             = flag.String("ca_file", "", "the `file` of CA certificates that -use_test_ca trusts")
	serverHostOverride = flag.String("server_host_override", "", "the `name` the server's certificate must carry (default: -server_host)")
)

// transportCredentials are the credentials the flags ask for: plaintext, or
// TLS (grpc-go's credentials offer ALPN h2 and refuse a server without it).
func transportCredentials() (credentials.TransportCredentials, error) {
	if !*useTLS {
		if *useTestCA || *caFile != "" || *serverHostOverride != "" {
			return nil, fmt.Errorf("-use_test_ca, -ca_file and -server_host_override need -use_tls")
		}
		return insecure.NewCredentials(), nil
	}
	config := &tls.Config{ServerName: *serverHostOverride}
	if *useTestCA {
		if *caFile == "" {
			return nil, fmt.Errorf("-use_test_ca needs -ca_file: this client carries no test CA of its own")
		}
		roots, err := tlsflags.CertPool(*caFile)
		if err != nil {
			return nil, fmt.Errorf("-ca_file: %w", err)
		}
		config.RootCAs = roots
	}
	return credentials.NewTLS(config), nil
}
