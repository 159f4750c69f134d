package report

import (
	"encoding/xml"
	"fmt"
	"math"
	"strings"
)

// Chart geometry, in SVG user units (pixels at 100%).
const (
	chartWidth   = 720
	chartHeight  = 420
	marginLeft   = 80
	marginRight  = 170 // room for the legend
	marginTop    = 44
	marginBottom = 60
)

// palette is the Okabe–Ito set: distinguishable with the common forms of
// colour blindness, and in greyscale print.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"}

// SVG draws the chart as a standalone SVG document. It uses no fonts,
// scripts or styles beyond plain attributes, so it renders the same in a
// browser, on a code host and in an image viewer, and equal charts produce
// equal bytes.
func (c *Chart) SVG() []byte {
	var b strings.Builder
	plotW := float64(chartWidth - marginLeft - marginRight)
	plotH := float64(chartHeight - marginTop - marginBottom)
	y := c.yAxis()
	yAt := func(v float64) float64 { return marginTop + plotH*(1-y.pos(v)) }

	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		chartWidth, chartHeight, chartWidth, chartHeight)
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(c.Title))
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", chartWidth, chartHeight)
	fmt.Fprintf(&b, `<text x="%d" y="24" text-anchor="middle" font-size="15" font-weight="bold">%s</text>`+"\n",
		marginLeft+int(plotW)/2, esc(c.Title))

	// Horizontal grid lines with y tick labels.
	for _, tv := range y.ticks {
		py := yAt(tv)
		fmt.Fprintf(&b, `<line x1="%d" y1="%s" x2="%s" y2="%s" stroke="#dddddd"/>`+"\n", marginLeft, num(py), num(marginLeft+plotW), num(py))
		fmt.Fprintf(&b, `<text x="%d" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", marginLeft-8, num(py), esc(tickLabel(tv)))
	}
	// Axes.
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%s" stroke="#333333"/>`+"\n", marginLeft, marginTop, marginLeft, num(marginTop+plotH))
	fmt.Fprintf(&b, `<line x1="%d" y1="%s" x2="%s" y2="%s" stroke="#333333"/>`+"\n", marginLeft, num(marginTop+plotH), num(marginLeft+plotW), num(marginTop+plotH))

	// Category labels.
	n := max(len(c.Categories), 1)
	slot := plotW / float64(n)
	for i, cat := range c.Categories {
		cx := marginLeft + slot*(float64(i)+0.5)
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#333333"/>`+"\n", num(cx), num(marginTop+plotH), num(cx), num(marginTop+plotH+5))
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(cx), num(marginTop+plotH+20), esc(cat))
	}
	// Axis titles.
	fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", num(marginLeft+plotW/2), chartHeight-14, esc(c.XLabel))
	ly := marginTop + plotH/2
	fmt.Fprintf(&b, `<text x="18" y="%s" text-anchor="middle" transform="rotate(-90 18 %s)">%s</text>`+"\n", num(ly), num(ly), esc(c.YLabel))

	switch c.Kind {
	case BarChart:
		c.drawBars(&b, slot, yAt, y)
	default:
		c.drawLines(&b, slot, yAt, y)
	}
	c.drawLegend(&b)
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

func (c *Chart) drawLines(b *strings.Builder, slot float64, yAt func(float64) float64, y axis) {
	for si, s := range c.Series {
		color := palette[si%len(palette)]
		var run []string // the current unbroken stretch of points
		flush := func() {
			if len(run) > 1 {
				fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", color, strings.Join(run, " "))
			}
			run = run[:0]
		}
		for i, v := range s.Values {
			if i >= len(c.Categories) || !drawable(v, y) {
				flush()
				continue
			}
			px, py := marginLeft+slot*(float64(i)+0.5), yAt(v)
			run = append(run, num(px)+","+num(py))
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3.5" fill="%s"/>`+"\n", num(px), num(py), color)
			drawErrorBar(b, s, i, px, 4, yAt, y, color)
		}
		flush()
	}
}

func (c *Chart) drawBars(b *strings.Builder, slot float64, yAt func(float64) float64, y axis) {
	if len(c.Series) == 0 {
		return
	}
	// Bars fill 80% of a category's slot, leaving gaps between groups.
	barW := slot * 0.8 / float64(len(c.Series))
	base := yAt(y.min)
	for si, s := range c.Series {
		color := palette[si%len(palette)]
		for i, v := range s.Values {
			if i >= len(c.Categories) || !drawable(v, y) {
				continue
			}
			x := marginLeft + slot*float64(i) + slot*0.1 + barW*float64(si)
			top := yAt(v)
			fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`+"\n", num(x), num(top), num(barW), num(base-top), color)
			drawErrorBar(b, s, i, x+barW/2, min(barW/4, 6), yAt, y, "#333333")
		}
	}
}

// drawErrorBar draws point i's error bar, if it has one, centred on px: a
// vertical line from its low to its high end with caps capW wide each side.
// An end the axis cannot show (at or below zero on a log axis) is clamped
// to the axis.
func drawErrorBar(b *strings.Builder, s ChartSeries, i int, px, capW float64, yAt func(float64) float64, y axis, color string) {
	lo, hi, ok := s.errorBar(i)
	if !ok {
		return
	}
	if y.log && lo <= 0 {
		lo = y.min
	}
	top, bottom := yAt(hi), yAt(lo)
	fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5"/>`+"\n", num(px), num(top), num(px), num(bottom), color)
	for _, py := range []float64{top, bottom} {
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5"/>`+"\n", num(px-capW), num(py), num(px+capW), num(py), color)
	}
}

func (c *Chart) drawLegend(b *strings.Builder) {
	x := chartWidth - marginRight + 16
	for si, s := range c.Series {
		y := marginTop + 8 + 20*si
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`+"\n", x, y-6, palette[si%len(palette)])
		fmt.Fprintf(b, `<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", x+18, y, esc(s.Name))
	}
}

func drawable(v float64, y axis) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && (!y.log || v > 0)
}

// logScale reports whether the y axis is logarithmic: asked for, and the
// positive values span at least an order of magnitude.
func (c *Chart) logScale() bool {
	if !c.LogY {
		return false
	}
	lo, hi := c.valueRange(true)
	return !math.IsInf(lo, 1) && hi >= 10*lo
}

// valueRange is the smallest and largest value and error bar end, only
// positive ones if positive; +Inf, -Inf when there are none.
func (c *Chart) valueRange(positive bool) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	add := func(v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) || (positive && v <= 0) {
			return
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	for _, s := range c.Series {
		for i, v := range s.Values {
			add(v)
			if math.IsNaN(v) {
				continue
			}
			if l, h, ok := s.errorBar(i); ok {
				add(l)
				add(h)
			}
		}
	}
	return lo, hi
}

// yAxis fits the axis to every drawable value and error bar.
func (c *Chart) yAxis() axis {
	log := c.logScale()
	lo, hi := c.valueRange(log)
	if math.IsInf(lo, 1) { // nothing to draw
		lo, hi = 0, 1
		if log {
			lo, hi = 1, 10
		}
	}
	if log {
		return logAxis(lo, hi)
	}
	return linearAxis(lo, hi)
}

// num prints a coordinate with one decimal: enough for a pixel grid, and
// fixed so output is byte-for-byte stable.
func num(v float64) string { return fmt.Sprintf("%.1f", v) }

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
