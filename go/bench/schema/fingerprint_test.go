package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

const x86CPUInfo = `processor	: 0
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) CPU   @ 2.20GHz
cpu MHz		: 2200.000

processor	: 1
model name	: Intel(R) Xeon(R) CPU   @ 2.20GHz
`

const arm64CPUInfo = `processor	: 0
BogoMIPS	: 50.00
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32
CPU implementer	: 0x41
CPU architecture: 8
CPU variant	: 0x3
CPU part	: 0xd0c
`

func TestParseCPUModel(t *testing.T) {
	if got, want := parseCPUModel(strings.NewReader(x86CPUInfo)), "Intel(R) Xeon(R) CPU @ 2.20GHz"; got != want {
		t.Errorf("x86: %q, want %q", got, want)
	}
	if got, want := parseCPUModel(strings.NewReader(arm64CPUInfo)), "CPU implementer 0x41 part 0xd0c"; got != want {
		t.Errorf("arm64: %q, want %q", got, want)
	}
	if got := parseCPUModel(strings.NewReader("garbage\n")); got != "" {
		t.Errorf("garbage: %q, want empty", got)
	}
}

func TestParseMemTotal(t *testing.T) {
	in := "MemTotal:       24568564 kB\nMemFree:         1000 kB\n"
	if got, want := parseMemTotal(strings.NewReader(in)), int64(24568564*1024); got != want {
		t.Errorf("got %d, want %d", got, want)
	}
}

// A fingerprint plus the build facts the flags supply must make a valid file.
func TestFingerprintValidates(t *testing.T) {
	env := Fingerprint()
	if env.GoVersion != runtime.Version() || env.CPUCount != runtime.NumCPU() {
		t.Errorf("Fingerprint() = %+v", env)
	}
	if runtime.GOOS == "linux" && !strings.HasPrefix(env.Kernel, "Linux ") {
		t.Errorf("Kernel = %q, want uname sysname and release", env.Kernel)
	}
	env.BuildConfig = "dev"
	f := NewFile("selftest", env)
	f.Results = []Result{{Scenario: "x", Status: StatusOK, Metrics: []Metric{NewMetric("ops", UnitCount, HigherIsBetter, []float64{1})}}}
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(data); err != nil {
		t.Errorf("Validate(fingerprinted file): %v", err)
	}
}

func TestGOGC(t *testing.T) {
	old := debug.SetGCPercent(250)
	defer debug.SetGCPercent(old)
	if got := GOGC(); got != "250" {
		t.Errorf("GOGC() = %q, want 250", got)
	}
	debug.SetGCPercent(-1)
	if got := GOGC(); got != "off" {
		t.Errorf("GOGC() = %q with the collector off, want off", got)
	}
}

func TestFileSHA256(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := FileSHA256(path), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; got != want {
		t.Errorf("FileSHA256 = %s, want %s", got, want)
	}
	if got := FileSHA256(path + ".missing"); got != "" {
		t.Errorf("FileSHA256 of a missing file = %q, want empty", got)
	}
}
