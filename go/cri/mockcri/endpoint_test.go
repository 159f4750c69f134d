package mockcri

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseEndpoint(t *testing.T) {
	for in, want := range map[string]Endpoint{
		"unix:///run/mockcri.sock": {"unix", "/run/mockcri.sock"},
		"/run/mockcri.sock":        {"unix", "/run/mockcri.sock"},
		"tcp://127.0.0.1:0":        {"tcp", "127.0.0.1:0"},
		"tcp://[::1]:1234":         {"tcp", "[::1]:1234"},
		"tcp://localhost:1234":     {"tcp", "localhost:1234"},
	} {
		got, err := ParseEndpoint(in)
		if err != nil || got != want {
			t.Errorf("ParseEndpoint(%q) = %v, %v; want %v", in, got, err, want)
		}
		if err == nil && in[0] != '/' && got.String() != in {
			t.Errorf("%q formats back as %q", in, got.String())
		}
	}
	for _, in := range []string{"", "unix://relative.sock", "tcp://192.0.2.1:80", "tcp://example.com:80", "tcp://127.0.0.1", "npipe:////./pipe/x", "relative.sock"} {
		if got, err := ParseEndpoint(in); err == nil {
			t.Errorf("ParseEndpoint(%q) = %v, want an error", in, got)
		}
	}
}

func TestListenUnixSocketFiles(t *testing.T) {
	dir, sock, err := SocketDir("x.sock")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	e := Endpoint{"unix", sock}

	lis, _, err := Listen(e)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Listen(e); err == nil {
		t.Error("a second Listen on a live socket succeeded")
	}
	lis.Close()
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket file left after Close: %v", err)
	}

	// A socket file whose server died (the listener forgot to unlink it)
	// is replaced.
	lis, _, err = Listen(e)
	if err != nil {
		t.Fatal(err)
	}
	lis.(interface{ SetUnlinkOnClose(bool) }).SetUnlinkOnClose(false)
	lis.Close()
	lis, _, err = Listen(e)
	if err != nil {
		t.Fatalf("stale socket not replaced: %v", err)
	}
	lis.Close()

	regular := filepath.Join(dir, "file")
	os.WriteFile(regular, nil, 0o600)
	if _, _, err := Listen(Endpoint{"unix", regular}); err == nil {
		t.Error("Listen replaced a regular file")
	}
}
