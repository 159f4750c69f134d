package cpuset

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// printCPUs makes the test binary, started again by the test below, print
// the CPUs it may run on and exit.
const printCPUs = "CPUSET_TEST_PRINT_CPUS"

func TestMain(m *testing.M) {
	if os.Getenv(printCPUs) != "" {
		s, err := Usable()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(s)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestChildInheritsThreadAffinity starts a process on one CPU and reads
// the CPU list it finds itself on, while this process keeps its own.
func TestChildInheritsThreadAffinity(t *testing.T) {
	usable, err := Usable()
	if err != nil {
		t.Fatal(err)
	}
	one := usable[len(usable)-1:]
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), printCPUs+"=1")
	var out []byte
	err = WithThreadAffinity(one, func() error {
		var err error
		out, err = cmd.Output()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != one.String() {
		t.Errorf("the child ran on CPUs %q, want %q", got, one)
	}
	if after, err := Usable(); err != nil || !slices.Equal(after, usable) {
		t.Errorf("this thread's CPUs after: %v, %v; want %v restored", after, err, usable)
	}
}
