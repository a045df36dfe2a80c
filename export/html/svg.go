package html

import (
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/tracedx/tracedx/export"
)

// Plots are hand-written SVG: a few hundred lines cover bars, strips and
// lines; the output is small, byte-deterministic (every number is formatted
// by us, with fixed precision) and needs no fonts, scripts or network. A
// plotting library (gonum/plot) would embed fonts or draw text as paths,
// add megabytes of dependencies and still need care for determinism.

// Okabe–Ito colour-blind-safe palette, used through CSS classes so that the
// dark theme can adjust them; every mark also has a text label or a <title>.
const (
	cCompute = "c-compute"
	cComm    = "c-comm"
	cMemory  = "c-memory"
	cIdle    = "c-idle"
	cOther   = "c-other"
	cBetween = "c-between" // time between two steps
)

var causeClass = map[string]string{
	"sync-blocked":   "c-sync",
	"memcpy-blocked": "c-memcpy",
	"comm-wait":      "c-comm",
	"launch-bound":   "c-launch",
}

// esc escapes s for HTML text and attributes after escaping control
// characters (a NUL or ESC in a name stays visible, not raw).
func esc(s string) string { return html.EscapeString(export.TextSafe(s)) }

// num formats a coordinate with at most one decimal, never an exponent.
func num(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		f = 0
	}
	s := fmt.Sprintf("%.1f", f)
	s = strings.TrimSuffix(s, ".0")
	if s == "-0" {
		s = "0"
	}
	return s
}

type svgb struct {
	b    strings.Builder
	w, h float64
}

func newSVG(w, h float64, label string) *svgb {
	s := &svgb{w: w, h: h}
	fmt.Fprintf(&s.b, `<svg class="plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s">`, num(w), num(h), num(w), num(h), esc(label))
	fmt.Fprintf(&s.b, `<title>%s</title>`, esc(label))
	return s
}

// rect draws a data mark (class "mark": the browser test counts them).
func (s *svgb) rect(x, y, w, h float64, class, tip string) { s.box("mark", x, y, w, h, class, tip) }

// key draws a legend swatch (class "key": not data).
func (s *svgb) key(x, y, w, h float64, class, tip string) { s.box("key", x, y, w, h, class, tip) }

func (s *svgb) box(kind string, x, y, w, h float64, class, tip string) {
	if w <= 0 || h <= 0 {
		return
	}
	fmt.Fprintf(&s.b, `<rect class="%s %s" x="%s" y="%s" width="%s" height="%s">`, kind, class, num(x), num(y), num(w), num(h))
	if tip != "" {
		fmt.Fprintf(&s.b, `<title>%s</title>`, esc(tip))
	}
	s.b.WriteString(`</rect>`)
}

func (s *svgb) text(x, y float64, anchor, class, t string) {
	fmt.Fprintf(&s.b, `<text x="%s" y="%s" text-anchor="%s" class="%s">%s</text>`, num(x), num(y), anchor, class, esc(t))
}

func (s *svgb) line(x1, y1, x2, y2 float64, class string) {
	fmt.Fprintf(&s.b, `<line class="%s" x1="%s" y1="%s" x2="%s" y2="%s"/>`, class, num(x1), num(y1), num(x2), num(y2))
}

func (s *svgb) String() string { return s.b.String() + "</svg>" }

// seg is one segment of a stacked bar.
type seg struct {
	v     float64
	class string
	label string // legend name
	tip   string
}

// hbar is one row of a horizontal bar chart.
type hbar struct {
	label string
	segs  []seg
	value string // text right of the bar
}

// hbars draws horizontal (stacked) bars scaled to max; labels left, values right.
func hbars(title string, rows []hbar, maxV float64, legend []seg) string {
	const w, labelW, valueW, rowH = 900.0, 250.0, 270.0, 22.0
	top := 8.0
	if len(legend) > 0 {
		top = 28
	}
	h := top + rowH*float64(len(rows)) + 6
	s := newSVG(w, h, title)
	x := 0.0
	for _, l := range legend {
		s.key(x, 6, 12, 12, l.class, l.label)
		s.text(x+16, 16, "start", "legend", l.label)
		x += 24 + 7.5*float64(len([]rune(l.label)))
	}
	bw := w - labelW - valueW - 10
	if maxV <= 0 {
		maxV = 1
	}
	for i, r := range rows {
		y := top + rowH*float64(i)
		s.text(labelW-6, y+15, "end", "label", clip(r.label, 32))
		x := labelW
		for _, sg := range r.segs {
			l := bw * sg.v / maxV
			s.rect(x, y+3, l, rowH-6, sg.class, sg.tip)
			x += max(l, 0)
		}
		s.text(x+6, y+15, "start", "value", r.value)
	}
	return s.String()
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// point is one (x, y) of a line series.
type point struct{ x, y float64 }

// series is one line of a line chart.
type series struct {
	name   string
	class  string
	marker string // "circle", "square" or "" (none)
	dashed bool
	pts    []point
}

// events is a kind of event marked on a line chart's x axis: one vertical
// line per event (events in the same pixel column are one line whose
// tooltip counts them), named in the legend with their count.
type events struct {
	name   string
	class  string
	dashed bool
	xs     []float64 // sorted
	ns     []int64   // events at each x (at least 1)
}

// lineChart draws series over a log2 x axis (logX) or a linear one.
func lineChart(title, xLabel, yLabel string, ss []series, logX bool, xFmt func(float64) string) string {
	return eventChart(title, xLabel, yLabel, ss, nil, logX, xFmt)
}

// eventChart is lineChart with events marked on the x axis.
func eventChart(title, xLabel, yLabel string, ss []series, evs []events, logX bool, xFmt func(float64) string) string {
	const w, h, left, right, top, bottom = 900.0, 300.0, 70.0, 20.0, 30.0, 40.0
	s := newSVG(w, h, title)
	var x0, x1, y1 = math.Inf(1), math.Inf(-1), 0.0
	tx := func(x float64) float64 {
		if logX {
			return math.Log2(math.Max(x, 1))
		}
		return x
	}
	for _, sr := range ss {
		for _, p := range sr.pts {
			x0, x1 = math.Min(x0, tx(p.x)), math.Max(x1, tx(p.x))
			y1 = math.Max(y1, p.y)
		}
	}
	for _, ev := range evs {
		for _, x := range ev.xs {
			x0, x1 = math.Min(x0, tx(x)), math.Max(x1, tx(x))
		}
	}
	if math.IsInf(x0, 0) {
		return s.String()
	}
	if x1 <= x0 {
		x1 = x0 + 1
	}
	if y1 <= 0 {
		y1 = 1
	}
	y1 = niceTop(y1)
	px := func(x float64) float64 { return left + (tx(x)-x0)/(x1-x0)*(w-left-right) }
	py := func(y float64) float64 { return h - bottom - y/y1*(h-top-bottom) }
	s.line(left, h-bottom, w-right, h-bottom, "axis")
	s.line(left, top, left, h-bottom, "axis")
	for i := 0; i <= 4; i++ {
		v := y1 * float64(i) / 4
		s.line(left, py(v), w-right, py(v), "grid")
		s.text(left-4, py(v)+4, "end", "tick", plain(v))
	}
	if logX {
		step := math.Max(1, math.Ceil((x1-x0)/10))
		for e := math.Ceil(x0); e <= x1; e += step {
			s.text(px(math.Pow(2, e)), h-bottom+16, "middle", "tick", xFmt(math.Pow(2, e)))
		}
	} else {
		for i := 0; i <= 4; i++ {
			v := x0 + (x1-x0)*float64(i)/4
			s.text(px(v), h-bottom+16, "middle", "tick", xFmt(v))
		}
	}
	s.text((left+w-right)/2, h-4, "middle", "label", xLabel)
	s.text(4, 16, "start", "label", yLabel)
	lx := left + 10
	for _, sr := range ss {
		if len(sr.pts) == 0 {
			continue
		}
		var pb strings.Builder
		for i, p := range sr.pts {
			if i > 0 {
				pb.WriteByte(' ')
			}
			pb.WriteString(num(px(p.x)) + "," + num(py(p.y)))
		}
		dash := ""
		if sr.dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(&s.b, `<polyline class="mark line %s" fill="none" points="%s"%s><title>%s</title></polyline>`, sr.class, pb.String(), dash, esc(sr.name))
		for _, p := range sr.pts {
			tip := fmt.Sprintf("%s: %s, %s", sr.name, xFmt(p.x), plain(p.y))
			switch sr.marker {
			case "circle":
				fmt.Fprintf(&s.b, `<circle class="mark %s" cx="%s" cy="%s" r="3"><title>%s</title></circle>`, sr.class, num(px(p.x)), num(py(p.y)), esc(tip))
			case "square":
				s.rect(px(p.x)-3, py(p.y)-3, 6, 6, sr.class, tip)
			}
		}
		// Legend: the series name beside a sample of its line and marker.
		fmt.Fprintf(&s.b, `<line class="key line %s" x1="%s" y1="%s" x2="%s" y2="%s"%s/>`, sr.class, num(lx), num(top-12), num(lx+20), num(top-12), dash)
		s.text(lx+24, top-8, "start", "legend", sr.name)
		lx += 40 + 7*float64(len([]rune(sr.name)))
	}
	for _, ev := range evs {
		lx = drawEvents(s, ev, px, top, h-bottom, lx, xFmt)
	}
	return s.String()
}

// drawEvents draws one kind of event as vertical lines from y0 to y1 and
// its legend entry at lx; it returns the next legend position.
func drawEvents(s *svgb, ev events, px func(float64) float64, y0, y1, lx float64, xFmt func(float64) string) float64 {
	if len(ev.xs) == 0 {
		return lx
	}
	dash := ""
	if ev.dashed {
		dash = ` stroke-dasharray="4 3"`
	}
	total := int64(0)
	for i := 0; i < len(ev.xs); {
		col := math.Round(px(ev.xs[i]))
		n, j := ev.ns[i], i+1
		for j < len(ev.xs) && math.Round(px(ev.xs[j])) == col {
			n += ev.ns[j]
			j++
		}
		total += n
		tip := fmt.Sprintf("%d %s at %s", n, ev.name, xFmt(ev.xs[i]))
		if j-i > 1 {
			tip = fmt.Sprintf("%d %s, %s to %s", n, ev.name, xFmt(ev.xs[i]), xFmt(ev.xs[j-1]))
		}
		fmt.Fprintf(&s.b, `<line class="mark event %s" x1="%s" y1="%s" x2="%s" y2="%s" stroke-width="1.5"%s><title>%s</title></line>`, ev.class, num(col), num(y0), num(col), num(y1), dash, esc(tip))
		i = j
	}
	label := fmt.Sprintf("%s (%d)", ev.name, total)
	fmt.Fprintf(&s.b, `<line class="key event %s" x1="%s" y1="%s" x2="%s" y2="%s" stroke-width="1.5"%s/>`, ev.class, num(lx+10), num(y0-18), num(lx+10), num(y0-6), dash)
	s.text(lx+16, y0-8, "start", "legend", label)
	return lx + 30 + 7*float64(len([]rune(label)))
}

// niceTop returns the top of a y axis from 0 to at least v in 4 ticks of a
// round step (1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten): KV usage of 96% gets
// 0, 25, ..., 100 rather than ticks at 26.4.
func niceTop(v float64) float64 {
	raw := v / 4
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 1.5, 2, 2.5, 3, 4, 5, 6, 8} {
		if m*mag >= raw*(1-1e-9) {
			return 4 * m * mag
		}
	}
	return 40 * mag
}

// plain formats a number with up to 3 significant decimals, no exponent.
func plain(f float64) string {
	a := math.Abs(f)
	switch {
	case a >= 100:
		return fmt.Sprintf("%.0f", f)
	case a >= 10:
		return fmt.Sprintf("%.1f", f)
	default:
		return fmt.Sprintf("%.2f", f)
	}
}
