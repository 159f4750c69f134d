package report

import (
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// A registered suite's layout and gated metrics are the ones Render and
// Compare use; Options.Layouts still overrides the layout, and a suite
// nobody registered gets the defaults.
func TestRegisteredSuiteLayoutAndGatedMetrics(t *testing.T) {
	Register(Suite{Name: "registry_test", Layout: Layout{Title: "Registered"}, Primary: []string{schema.MetricLatencyP99}})
	if got := layoutFor("registry_test", nil).Title; got != "Registered" {
		t.Errorf("layout %q, want the registered one", got)
	}
	if got := layoutFor("registry_test", map[string]Layout{"registry_test": {Title: "Given"}}).Title; got != "Given" {
		t.Errorf("layout %q, want the one Options gave", got)
	}
	if got := layoutFor("registered_by_nobody", nil); len(got.Sections) != len(DefaultLayout.Sections) || got.Title != "" {
		t.Errorf("layout %+v, want DefaultLayout", got)
	}
	for _, c := range []struct {
		suite, metric string
		want          bool
	}{
		{"registry_test", schema.MetricLatencyP99, true},
		{"registry_test", schema.MetricReqPerSec, false},
		{"registered_by_nobody", schema.MetricReqPerSec, true},
		{"registered_by_nobody", schema.MetricLatencyP99, false},
	} {
		if got := IsPrimaryMetric(c.suite, c.metric); got != c.want {
			t.Errorf("IsPrimaryMetric(%s, %s) = %v, want %v", c.suite, c.metric, got, c.want)
		}
	}
}

// Two layouts for one suite, or a suite without a name, are programming
// errors that Register refuses at once.
func TestRegisterRefusesDuplicatesAndNoName(t *testing.T) {
	Register(Suite{Name: "registry_test_twice"})
	for _, s := range []Suite{{Name: "registry_test_twice"}, {}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%+v) did not panic", s)
				}
			}()
			Register(s)
		}()
	}
}
