package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestLinearAxisTicks(t *testing.T) {
	a := linearAxis(0, 1050)
	if want := []float64{0, 500, 1000, 1500}; !slices.Equal(a.ticks, want) {
		t.Errorf("ticks %v, want %v", a.ticks, want)
	}
	a = linearAxis(0, 0.27)
	if want := []float64{0, 0.1, 0.2, 0.3}; !slices.Equal(a.ticks, want) {
		t.Errorf("ticks %v, want %v", a.ticks, want)
	}
	if p := a.pos(0.15); math.Abs(p-0.5) > 1e-9 {
		t.Errorf("pos(0.15) = %v, want 0.5", p)
	}
}

func TestLogAxisTicks(t *testing.T) {
	a := logAxis(11.6, 78471)
	if want := []float64{10, 100, 1000, 1e4, 1e5}; !slices.Equal(a.ticks, want) {
		t.Errorf("ticks %v, want %v", a.ticks, want)
	}
	if p := a.pos(1000); math.Abs(p-0.5) > 1e-9 {
		t.Errorf("pos(1000) = %v, want 0.5", p)
	}
}

func TestTickLabel(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.5: "0.5", 250: "250", 2500: "2.5k", 1e7: "10M", 1.5e9: "1.5G"} {
		if got := tickLabel(v); got != want {
			t.Errorf("tickLabel(%v) = %q, want %q", v, got, want)
		}
	}
}

func sampleChart(kind ChartKind, logY bool) *Chart {
	return &Chart{
		Title: "req/s by clients <unary & bidi>", XLabel: "Clients", YLabel: "req/s",
		Kind: kind, LogY: logY,
		Categories: []string{"1", "10", "100"},
		Series: []ChartSeries{
			{Name: "Go", Values: []float64{9214, 30850, 78471}},
			{Name: "Lisp", Values: []float64{11.6, math.NaN(), 1179.2}},
		},
	}
}

func TestChartSVGGolden(t *testing.T) {
	checkGolden(t, "chart-line-log.svg", sampleChart(LineChart, true).SVG())
	checkGolden(t, "chart-bar-linear.svg", sampleChart(BarChart, false).SVG())
}

// The SVG must be well-formed XML (titles are escaped) and identical
// across calls.
func TestChartSVGIsWellFormedAndDeterministic(t *testing.T) {
	for _, c := range []*Chart{sampleChart(LineChart, true), sampleChart(BarChart, false), {Title: "empty"}} {
		svg := c.SVG()
		dec := xml.NewDecoder(bytes.NewReader(svg))
		for {
			_, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: not well-formed: %v", c.Title, err)
			}
		}
		if !bytes.Equal(svg, c.SVG()) {
			t.Errorf("%s: output differs between calls", c.Title)
		}
	}
}

// Error bars span each point's interval, and the axis makes room for them.
func TestChartErrorBars(t *testing.T) {
	c := &Chart{
		Title: "t", Kind: BarChart, Categories: []string{"1"},
		Series: []ChartSeries{{Name: "Go", Values: []float64{100}, Lo: []float64{90}, Hi: []float64{130}}},
	}
	svg := string(c.SVG())
	// One vertical line and two caps.
	if n := strings.Count(svg, `stroke-width="1.5"`); n != 3 {
		t.Errorf("%d error bar lines, want 3:\n%s", n, svg)
	}
	if a := c.yAxis(); a.max < 130 {
		t.Errorf("axis tops at %v, below the error bar's 130", a.max)
	}
}

// LogY gives a log axis only where values span an order of magnitude.
func TestLogAxisOnlyAcrossOrdersOfMagnitude(t *testing.T) {
	c := sampleChart(LineChart, true)
	if !c.yAxis().log {
		t.Error("11.6 to 78,471: want a log axis")
	}
	c.Series = []ChartSeries{{Name: "Go", Values: []float64{20, 35, 90}}}
	if c.yAxis().log {
		t.Error("20 to 90: want a linear axis")
	}
}
