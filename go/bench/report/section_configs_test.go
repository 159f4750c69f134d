package report

import (
	"slices"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func configRow(method string, perChunk int, latency float64) Row {
	params := map[string]any{"method": method, "containers": 1024}
	if perChunk > 0 {
		params["per_chunk"] = perChunk
	}
	return Row{Result: schema.Result{
		Scenario: method, Parameters: params, Status: schema.StatusOK,
		Metrics: []schema.Metric{schema.NewMetric("latency_p50", schema.UnitNanoseconds, schema.LowerIsBetter, []float64{latency})},
	}}
}

// Columns come in Order of the leading parameter, then by chunk size, with
// one column per configuration however the rows are ordered.
func TestAllConfigurationsColumns(t *testing.T) {
	d := &Dataset{Rows: []Row{
		configRow("chunked", 256, 3), configRow("stream", 0, 2), configRow("chunked", 16, 4),
		configRow("list", 0, 1), configRow("chunked", 16, 5),
	}}
	s := AllConfigurations{Vary: []string{"method", "per_chunk"}, Order: []string{"list", "stream"}, Names: map[string]string{"list": "List"}}
	var names []string
	for _, c := range s.columns(d) {
		names = append(names, c.Name)
	}
	want := []string{"List", "stream", "chunked, per_chunk=16", "chunked, per_chunk=256"}
	if !slices.Equal(names, want) {
		t.Errorf("columns %q, want %q", names, want)
	}
}

// Two configurations are VariantComparison's job: no table.
func TestAllConfigurationsNeedsThree(t *testing.T) {
	d := &Dataset{Rows: []Row{configRow("list", 0, 1), configRow("stream", 0, 2)}}
	p := &Page{}
	AllConfigurations{Title: "All", Vary: []string{"method"}}.Render(d, p)
	if p.items != 0 || p.md.Len() != 0 {
		t.Errorf("rendered %q", p.md.String())
	}
}
