// Command ociassemble builds OCI images reproducibly for the //tools/oci Bazel rules, on
// go-containerregistry, without a container daemon.
//
//	ociassemble image   --config FILE --out DIR --digest FILE [--base DIR] [--layer TAR]...
//	ociassemble index   --out DIR --digest FILE --image DIR...
//	ociassemble tarball --layout DIR --tag REF --out FILE
//	ociassemble push    --layout DIR --registry HOST[:PORT] --repository NAME [--tags a,b]
//	ociassemble rootfs  --manifest FILE --out TAR
//
// Every output depends only on the inputs' contents: timestamps are the Unix epoch, layer entries
// are sorted and carry no owner names, so two clean builds give the same digests.
package main

import (
	"fmt"
	"os"
)

var commands = map[string]func(args []string) error{
	"image":   runImage,
	"index":   runIndex,
	"tarball": runTarball,
	"push":    runPush,
	"rootfs":  runRootfs,
}

func main() {
	if len(os.Args) < 2 || commands[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: ociassemble image|index|tarball|push|rootfs [flags]")
		os.Exit(2)
	}
	if err := commands[os.Args[1]](os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "ociassemble %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
