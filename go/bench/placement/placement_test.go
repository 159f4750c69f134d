package placement

import (
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/cpuset"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func TestParse(t *testing.T) {
	for _, bad := range []struct{ in, want string }{
		{"half", "want auto, off or SERVER/CLIENT"},
		{"0-1/1", "overlap"},
		{"0/x", "not a CPU number"},
	} {
		if _, err := Parse(bad.in); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want an error with %q", bad.in, err, bad.want)
		}
	}
	spec, err := Parse("0/1-2")
	if err != nil {
		t.Fatal(err)
	}
	if p := spec.Resolve(); p.Server.String() != "0" || p.Client.String() != "1-2" || !p.Pinned() {
		t.Errorf("explicit: %+v", p)
	}
	off, _ := Parse(Off)
	if p := off.Resolve(); p.Pinned() || p.Why != "-cpus off" {
		t.Errorf("off: %+v", p)
	}
	auto, _ := Parse(Auto)
	usable, err := cpuset.Usable()
	if err != nil {
		t.Skip(err)
	}
	p := auto.Resolve()
	if len(usable) >= 2 && (!p.Pinned() || p.Server.Overlaps(p.Client) || len(p.Server)+len(p.Client) != len(usable)) {
		t.Errorf("auto on %s: %+v", usable, p)
	}
	if len(usable) == 1 && (p.Pinned() || !strings.Contains(p.Why, "one usable CPU")) {
		t.Errorf("auto on one CPU: %+v", p)
	}
}

func TestInProcess(t *testing.T) {
	extra := map[string]string{}
	InProcess().Record(extra)
	if !strings.HasPrefix(extra[schema.ExtraCPUs], "unpinned: in-process, client and server sharing CPUs ") {
		t.Errorf("in-process: %v", extra)
	}
}

func TestRecord(t *testing.T) {
	extra := map[string]string{}
	Placement{Server: cpuset.Set{0}, Client: cpuset.Set{1}}.Record(extra)
	if extra[schema.ExtraServerCPUs] != "0" || extra[schema.ExtraClientCPUs] != "1" || extra[schema.ExtraCPUs] != "" {
		t.Errorf("pinned: %v", extra)
	}
	extra = map[string]string{}
	Unpinned("the server runs elsewhere").Record(extra)
	if extra[schema.ExtraCPUs] != "unpinned: the server runs elsewhere" || len(extra) != 1 {
		t.Errorf("unpinned: %v", extra)
	}
	var none Placement
	if err := none.PinSelf(); err != nil {
		t.Errorf("pinning an unpinned placement: %v", err)
	}
}
