// Command ocicheck is the test behind oci_image_test: it checks an OCI layout built by //tools/oci.
//
//	ocicheck --layout DIR --platforms linux/amd64,linux/arm64 --entrypoint '["/server"]' [--same_as DIR]...
//
// It validates the layout with go-containerregistry's validate package, checks every image's config
// (OS, architecture, entrypoint) against the index and the expectation, checks that the entrypoint
// is an ELF executable for the image's CPU, and that --same_as layouts have the same digest.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/grpcbench/grpcbench/tools/oci/ocilayout"
)

type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

func main() {
	dir := flag.String("layout", "", "OCI layout to check")
	platforms := flag.String("platforms", "", "comma-separated OS/ARCH the layout must hold, in order")
	entrypoint := flag.String("entrypoint", "", "the expected entrypoint, as a JSON list")
	var sameAs listFlag
	flag.Var(&sameAs, "same_as", "a layout built from the same inputs that must have the same digest")
	flag.Parse()
	var want []string
	if err := json.Unmarshal([]byte(*entrypoint), &want); err != nil || *dir == "" || *platforms == "" {
		fmt.Fprintln(os.Stderr, "usage: ocicheck --layout DIR --platforms OS/ARCH,... --entrypoint JSON [--same_as DIR]...")
		os.Exit(2)
	}
	c := &checker{}
	c.run(*dir, strings.Split(*platforms, ","), want, sameAs)
	fmt.Printf("%d passed, %d failed\n", c.passed, c.failed)
	if c.failed > 0 {
		os.Exit(1)
	}
}

// checker counts and prints named checks.
type checker struct{ passed, failed int }

func (c *checker) check(name string, err error) bool {
	if err != nil {
		c.failed++
		fmt.Printf("FAIL %s: %v\n", name, err)
		return false
	}
	c.passed++
	fmt.Printf("ok   %s\n", name)
	return true
}

func (c *checker) run(dir string, platforms, entrypoint []string, sameAs []string) {
	root, err := ocilayout.Read(dir)
	if !c.check("layout readable", err) {
		return
	}
	defer root.Close()
	fmt.Printf("     %s %s\n", root.Descriptor.MediaType, root.Digest())
	images := checkRoot(c, root, platforms)
	for _, img := range images {
		checkImage(c, img, entrypoint)
	}
	for _, other := range sameAs {
		c.check("same digest as "+other, sameDigest(root, other))
	}
}
