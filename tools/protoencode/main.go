// Command protoencode writes the binary protobuf encoding of messages given
// as protojson, with Go's protobuf runtime and deterministic marshalling:
//
//	protoencode -descriptor_set SET.pb -out DIR NAME.json...
//
// Each input's base name is "<message full name>.<label>.json", for example
// routeguide.Point.basic.json; the message type is looked up in the
// FileDescriptorSet SET.pb (every file it needs, imports first, as protoc's
// --include_imports writes it), and DIR/<message full name>.<label>.bin is
// written. clgrpc's codec tests decode these files and encode the same
// values, so that the Lisp codec is checked against the reference runtime
// octet for octet; a build rule makes them (lisp/clgrpc/BUILD.bazel).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

func main() {
	set := flag.String("descriptor_set", "", "`path` of a FileDescriptorSet with the messages' types and their imports")
	out := flag.String("out", "", "`directory` to write NAME.bin into")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: protoencode -descriptor_set SET.pb -out DIR NAME.json...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *set == "" || *out == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*set, *out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "protoencode:", err)
		os.Exit(1)
	}
}

func run(setPath, outDir string, inputs []string) error {
	files, err := readFiles(setPath)
	if err != nil {
		return err
	}
	for _, input := range inputs {
		name, ok := strings.CutSuffix(filepath.Base(input), ".json")
		if !ok {
			return fmt.Errorf("%s: not a .json file", input)
		}
		encoded, err := encode(files, input, name)
		if err != nil {
			return fmt.Errorf("%s: %w", input, err)
		}
		if err := os.WriteFile(filepath.Join(outDir, name+".bin"), encoded, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func readFiles(path string) (*protoregistry.Files, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return files, nil
}

// encode reads the protojson file input as the message that name
// ("<full name>.<label>") names, and marshals it deterministically.
func encode(files *protoregistry.Files, input, name string) ([]byte, error) {
	dot := strings.LastIndexByte(name, '.')
	if dot < 0 {
		return nil, errors.New("the name has no label: want <message full name>.<label>.json")
	}
	d, err := files.FindDescriptorByName(protoreflect.FullName(name[:dot]))
	if err != nil {
		return nil, err
	}
	md, ok := d.(protoreflect.MessageDescriptor)
	if !ok {
		return nil, fmt.Errorf("%s is not a message", name[:dot])
	}
	js, err := os.ReadFile(input)
	if err != nil {
		return nil, err
	}
	msg := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal(js, msg); err != nil {
		return nil, err
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(msg)
}
