// Command testcerts writes the TLS test credentials of this repository: a test CA, a server
// certificate with the names gRPC's interop suite connects to, a client certificate for mutual
// TLS, and a client certificate from another CA that servers must refuse.
//
// The output is the same on every run: every key is an Ed25519 key derived from a fixed seed,
// Ed25519 signatures are deterministic, and serial numbers and validity are fixed. So the
// credentials are build outputs (//tools/testcerts:credentials) that two builds make alike, and
// no secret is checked in. They protect nothing: anyone can derive the keys.
//
//	testcerts -out DIR
package main

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

var (
	notBefore = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	notAfter  = time.Date(2075, 1, 1, 0, 0, 0, 0, time.UTC)
)

// key derives the Ed25519 key called name.
func key(name string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("grpcbench test key: " + name))
	return ed25519.NewKeyFromSeed(seed[:])
}

type issued struct {
	cert *x509.Certificate
	der  []byte
	key  ed25519.PrivateKey
}

func create(template *x509.Certificate, keyName string, parent *issued) (*issued, error) {
	k := key(keyName)
	template.NotBefore, template.NotAfter = notBefore, notAfter
	signer, parentCert := k, template
	if parent != nil {
		signer, parentCert = parent.key, parent.cert
	}
	der, err := x509.CreateCertificate(nil, template, parentCert, k.Public(), signer)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &issued{cert: cert, der: der, key: k}, nil
}

func ca(serial int64, name string) (*issued, error) {
	return create(&x509.Certificate{
		SerialNumber:          big.NewInt(serial),
		Subject:               pkix.Name{Organization: []string{"grpcbench"}, CommonName: name},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}, name, nil)
}

func leaf(serial int64, cn string, usage x509.ExtKeyUsage, dns []string, ips []net.IP, uris []string, parent *issued) (*issued, error) {
	var parsed []*url.URL
	for _, u := range uris {
		p, err := url.Parse(u)
		if err != nil {
			return nil, err
		}
		parsed = append(parsed, p)
	}
	return create(&x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{Organization: []string{"grpcbench"}, CommonName: cn},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		DNSNames:     dns,
		IPAddresses:  ips,
		URIs:         parsed,
	}, cn, parent)
}

func writePEM(dir, name, kind string, der []byte) error {
	return os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o644)
}

func writePair(dir, base string, c *issued) error {
	if err := writePEM(dir, base+".pem", "CERTIFICATE", c.der); err != nil {
		return err
	}
	der, err := x509.MarshalPKCS8PrivateKey(c.key)
	if err != nil {
		return err
	}
	return writePEM(dir, base+".key", "PRIVATE KEY", der)
}

func run(dir string) error {
	root, err := ca(1, "grpcbench test CA")
	if err != nil {
		return err
	}
	other, err := ca(2, "grpcbench other CA")
	if err != nil {
		return err
	}
	// The names of gRPC's interop test server certificate (interop clients connect with
	// -server_host_override=foo.test.google.fr), and loopback.
	server, err := leaf(10, "*.test.google.fr", x509.ExtKeyUsageServerAuth,
		[]string{"*.test.google.fr", "waterzooi.test.google.be", "*.test.youtube.com", "localhost"},
		[]net.IP{net.ParseIP("192.168.1.3"), net.ParseIP("127.0.0.1"), net.ParseIP("::1")}, nil, root)
	if err != nil {
		return err
	}
	client, err := leaf(11, "grpcbench test client", x509.ExtKeyUsageClientAuth,
		[]string{"client.test.grpcbench"}, nil, []string{"spiffe://grpcbench.test/client"}, root)
	if err != nil {
		return err
	}
	stranger, err := leaf(12, "grpcbench other client", x509.ExtKeyUsageClientAuth,
		[]string{"other.test.grpcbench"}, nil, nil, other)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range []struct {
		base string
		c    *issued
	}{{"server", server}, {"client", client}, {"other_client", stranger}} {
		if err := writePair(dir, f.base, f.c); err != nil {
			return err
		}
	}
	if err := writePEM(dir, "ca.pem", "CERTIFICATE", root.der); err != nil {
		return err
	}
	return writePEM(dir, "other_ca.pem", "CERTIFICATE", other.der)
}

func main() {
	out := flag.String("out", "", "the `directory` to write ca.pem, server.{pem,key}, client.{pem,key}, other_ca.pem and other_client.{pem,key} to")
	flag.Parse()
	if *out == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: testcerts -out DIR")
		flag.PrintDefaults()
		os.Exit(2)
	}
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "testcerts:", err)
		os.Exit(1)
	}
}
