package main

import (
	"slices"
	"testing"

	"github.com/grpcbench/grpcbench/go/cri/mockcri"
)

func TestPlan(t *testing.T) {
	cfg := config{
		modes:       methodsFlag{methodList, methodStream, methodChunked},
		containers:  intsFlag{32, 1024},
		annotations: intsFlag{32},
		perChunk:    intsFlag{16, 256},
		codecs:      stringsFlag{mockcri.CodecCRIWire},
	}
	groups := plan(cfg)
	if len(groups) != 2 || groups[0].containers != 32 || groups[1].containers != 1024 {
		t.Fatalf("groups: %+v", groups)
	}
	var names []string
	for _, s := range groups[1].scenarios {
		names = append(names, s.name())
	}
	want := []string{
		"list/containers=1024/annotations=32",
		"stream/containers=1024/annotations=32",
		"chunked/containers=1024/annotations=32/per_chunk=16",
		"chunked/containers=1024/annotations=32/per_chunk=256",
	}
	if len(names) != len(want) {
		t.Fatalf("scenarios %q, want %q", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("scenario %d is %q, want %q", i, names[i], want[i])
		}
	}
}

// per_chunk is a parameter of chunked scenarios only: the report's "cri"
// layout then shows list and stream next to every chunk size.
func TestParams(t *testing.T) {
	cfg := config{n: 1300, gcPercent: 800}
	list := scenario{method: methodList, containers: 32, annotations: 32, codec: mockcri.CodecCRIWire}.params("unix", cfg)
	if _, ok := list["per_chunk"]; ok || list["method"] != "list" || list["containers"] != 32 || list["n"] != int64(1300) {
		t.Errorf("list params: %v", list)
	}
	if list["codec"] != "criwire" || list["gogc"] != 800 || list["transport"] != "unix" {
		t.Errorf("list params do not record the tuning: %v", list)
	}
	chunked := scenario{method: methodChunked, containers: 32, annotations: 32, perChunk: 16}.params("unix", cfg)
	if chunked["per_chunk"] != 16 || chunked["method"] != "chunked" {
		t.Errorf("chunked params: %v", chunked)
	}
}

// Several codecs are measured in one group, in turns, each scenario named
// with its codec.
func TestPlanCodecs(t *testing.T) {
	cfg := config{
		modes:       methodsFlag{methodList, methodStream},
		containers:  intsFlag{1024},
		annotations: intsFlag{32},
		codecs:      stringsFlag{mockcri.CodecCRIWire, mockcri.CodecFloor},
	}
	groups := plan(cfg)
	if len(groups) != 1 {
		t.Fatalf("groups: %+v", groups)
	}
	var names []string
	for _, s := range groups[0].scenarios {
		names = append(names, s.name())
	}
	want := []string{
		"list/containers=1024/annotations=32/codec=criwire",
		"stream/containers=1024/annotations=32/codec=criwire",
		"list/containers=1024/annotations=32/codec=floor",
		"stream/containers=1024/annotations=32/codec=floor",
	}
	if !slices.Equal(names, want) {
		t.Errorf("scenarios %q, want %q", names, want)
	}
	if p := groups[0].scenarios[2].params("unix", cfg); p["codec"] != mockcri.CodecFloor {
		t.Errorf("floor scenario's params: %v", p)
	}
}
