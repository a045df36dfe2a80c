// Package html renders a report as one self-contained HTML file: inline CSS
// and inline SVG plots, no script, no font, no network fetch; readable as
// text, light or dark following the reader's preference, and byte-identical
// for the same report.
//
// Place: cmd → export/html → {export, compare, model}.
package html

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/export"
	"github.com/tracedx/tracedx/model"
)

func init() { export.RegisterHTML(Render) }

const css = `:root{color-scheme:light dark;--fg:#1b1b1b;--bg:#fff;--muted:#5c5c5c;--rule:#d0d0d0;--card:#f6f6f6;
--compute:#0072B2;--comm:#E69F00;--memory:#009E73;--idle:#c8c8c8;--other:#6b6b6b;--sync:#D55E00;--memcpy:#CC79A7;--launch:#56B4E9;--err:#b00020;--warn:#8a5a00}
@media (prefers-color-scheme:dark){:root{--fg:#e6e6e6;--bg:#161616;--muted:#a8a8a8;--rule:#3a3a3a;--card:#202020;
--compute:#3a8ed0;--comm:#f0b13a;--memory:#2cc497;--idle:#4a4a4a;--other:#a0a0a0;--sync:#ff7a3d;--memcpy:#e39ac6;--launch:#a6dcf5;--err:#ff6b81;--warn:#f0b13a}}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;max-width:1000px;padding:16px}
h1{font-size:1.5em}h2{border-bottom:1px solid var(--rule);padding-bottom:4px;margin-top:2em}h3{margin-bottom:.3em}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;overflow-wrap:anywhere}
table{border-collapse:collapse;margin:.5em 0;font-size:13px}td,th{border:1px solid var(--rule);padding:2px 6px;vertical-align:top}
th{background:var(--card);text-align:left}td.n{text-align:right;white-space:nowrap}
.sev-error{color:var(--err);font-weight:600}.sev-warning{color:var(--warn);font-weight:600}.muted{color:var(--muted)}
.finding{background:var(--card);padding:8px 12px;margin:12px 0;border-left:4px solid var(--rule)}
.finding.error{border-left-color:var(--err)}.finding.warning{border-left-color:var(--warn)}
svg.plot{max-width:100%;height:auto;display:block;margin:6px 0}
svg text{fill:var(--fg);font:12px system-ui,sans-serif}svg text.tick,svg text.value{fill:var(--muted)}
svg .axis{stroke:var(--muted)}svg .grid{stroke:var(--rule)}svg .step{stroke:var(--fg);stroke-width:1}
.c-compute{fill:var(--compute);stroke:var(--compute)}.c-comm{fill:var(--comm);stroke:var(--comm)}.c-memory{fill:var(--memory);stroke:var(--memory)}
.c-idle{fill:var(--idle);stroke:var(--idle)}.c-other{fill:var(--other);stroke:var(--other)}.c-sync{fill:var(--sync);stroke:var(--sync)}
.c-memcpy,.c-between{fill:var(--memcpy);stroke:var(--memcpy)}.c-ref{fill:var(--fg);stroke:var(--fg)}.c-launch{fill:var(--launch);stroke:var(--launch)}
polyline.line,line.line{fill:none;stroke-width:2}rect.mark,rect.key{stroke:none}
`

type page struct {
	b *bufio.Writer
}

func (p *page) f(format string, args ...any) { fmt.Fprintf(p.b, format, args...) }

func (p *page) head(title string) {
	p.f("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	p.f("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n")
	p.f("<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n", esc(title), css)
}

func (p *page) end() { p.f("</body>\n</html>\n") }

// code writes a name as an escaped code element (esc applies the name cap).
func code(s string) string { return "<code>" + esc(s) + "</code>" }

// Render writes r as an HTML page.
func Render(w io.Writer, r *model.Report, o export.Options) error {
	p := &page{b: bufio.NewWriter(w)}
	title := "tracedx report"
	if len(r.Inputs) == 1 {
		title += ": " + baseName(r.Inputs[0].Path)
	} else if len(r.Inputs) > 1 {
		title += fmt.Sprintf(": %d inputs", len(r.Inputs))
	}
	p.head(title)
	p.f("<h1>%s</h1>\n", esc(title))
	e, wn, in := 0, 0, 0
	for _, f := range r.Findings {
		switch f.Severity {
		case model.SevError:
			e++
		case model.SevWarning:
			wn++
		default:
			in++
		}
	}
	p.f("<p>%d finding(s): <span class=\"sev-error\">%d error</span>, <span class=\"sev-warning\">%d warning</span>, %d info. %s %s, breakdown window <code>%s</code>.</p>\n",
		len(r.Findings), e, wn, in, esc(r.ToolName), esc(r.ToolVersion), esc(r.Window))

	groups := export.GroupFindings(r)
	p.f("<h2 id=\"summary\">Summary</h2>\n")
	if len(groups) == 0 {
		p.f("<p>No findings.</p>\n")
	} else {
		p.f("<ol>\n")
		for i, g := range groups {
			if i == 3 {
				break
			}
			cost := ""
			if g.Cost > 0 {
				cost = " Costs " + g.Cost.String() + "."
			}
			p.f("<li><span class=\"sev-%s\">%s</span> %s: <a href=\"#rule-%s\">%s</a>.%s</li>\n", g.Worst.Severity, g.Worst.Severity, code(g.Rule), esc(g.Rule), esc(g.Worst.Title), cost)
		}
		p.f("</ol>\n")
	}

	writeTime(p, r)
	writeRanks(p, r)
	writeKernelsPlot(p, r)
	writeSteps(p, r, o)
	writeMemory(p, r)
	writeBench(p, r)
	writeServing(p, r)
	writeFindings(p, r, groups, o)

	limit := 25
	if o.Full {
		limit = 0
	}
	if ts := export.SummaryTables(r, limit); len(ts) > 0 {
		p.f("<h2 id=\"tables\">Summary tables</h2>\n")
		for _, t := range ts {
			writeTable(p, t)
		}
	}
	writeInputs(p, r)
	p.end()
	return p.b.Flush()
}

func baseName(path string) string {
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		return path[i+1:]
	}
	return path
}

func devLabel(rank int, dev model.DeviceID) string {
	if rank == model.NoRank {
		return fmt.Sprintf("gpu %d", dev)
	}
	return fmt.Sprintf("rank %d gpu %d", rank, dev)
}

func pct(a, b model.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// gapWin is a kernel-gap evidence window with its cause.
type gapWin struct {
	start, end model.Time
	cause      string
	note       string
}

// gapsOf collects kernel-gap evidence windows per (rank, device).
func gapsOf(r *model.Report) map[[2]int][]gapWin {
	out := map[[2]int][]gapWin{}
	for _, f := range r.Findings {
		if f.Rule != "kernel-gap" {
			continue
		}
		for _, ev := range f.Evidence {
			cause := "other"
			if i := strings.Index(ev.Note, "gap: "); i >= 0 {
				c := ev.Note[i+5:]
				if j := strings.IndexAny(c, " (;,"); j >= 0 {
					c = c[:j]
				}
				cause = c
			}
			k := [2]int{ev.Rank, int(ev.Device)}
			out[k] = append(out[k], gapWin{ev.Start, ev.End, cause, ev.Note})
		}
	}
	return out
}

func writeTime(p *page, r *model.Report) {
	if len(r.Devices) == 0 {
		return
	}
	p.f("<h2 id=\"time\">Where the GPU time went</h2>\n")
	var rows []hbar
	var maxSpan float64
	for _, d := range r.Devices {
		maxSpan = max(maxSpan, float64(d.Span))
	}
	for _, d := range r.Devices {
		other := d.Busy - d.Compute
		rows = append(rows, hbar{label: devLabel(d.Rank, d.Device), value: fmt.Sprintf("busy %.1f%%, idle %.1f%% of %s", pct(d.Busy, d.Span), pct(d.Idle, d.Span), d.Span),
			segs: []seg{
				{v: float64(d.Compute), class: cCompute, tip: fmt.Sprintf("computation %s (%.1f%%)", d.Compute, pct(d.Compute, d.Span))},
				{v: float64(other), class: cComm, tip: fmt.Sprintf("communication / memory not overlapped by computation %s (%.1f%%); communication %s, memory %s", other, pct(other, d.Span), d.Communication, d.Memory)},
				{v: float64(d.Idle), class: cIdle, tip: fmt.Sprintf("idle %s (%.1f%%)", d.Idle, pct(d.Idle, d.Span))},
			}})
	}
	p.f("<p>Each bar is one device's span: computation, then communication or memory work not overlapped by computation, then idle time.</p>\n")
	p.f("%s\n", hbars("GPU time by class per device", rows, maxSpan, []seg{{class: cCompute, label: "computation"}, {class: cComm, label: "communication / memory only"}, {class: cIdle, label: "idle"}}))

	gaps := gapsOf(r)
	tls := r.Summary.Timelines
	if len(tls) > 0 {
		p.f("<h3>Busy / idle timeline</h3>\n<p>Bar height is the busy share of each of 240 slices of the span, computation at the bottom and communication or copies above it; marks under a strip are the idle gaps the kernel-gap rule reported, coloured and named by cause; ticks are profiler step starts.</p>\n")
		n := len(tls)
		if n > 16 {
			n = 16
			p.f("<p class=\"muted\">First 16 of %d devices.</p>\n", len(tls))
		}
		for _, tl := range tls[:n] {
			p.f("%s\n", strip(tl, gaps[[2]int{tl.Rank, int(tl.Device)}], r.Summary.Steps))
		}
	}
}

// strip draws one device's occupancy with its gaps and step starts.
func strip(tl model.DeviceTimeline, gaps []gapWin, steps []model.StepSummary) string {
	const w, left, h = 900.0, 110.0, 64.0
	label := devLabel(tl.Rank, tl.Device)
	s := newSVG(w, h, "Busy/idle timeline of "+label)
	s.text(left-6, 24, "end", "label", label)
	span := float64(tl.End - tl.Start)
	bw := (w - left - 4) / float64(len(tl.Busy))
	s.rect(left, 6, w-left-4, 30, cIdle, "idle")
	// Per bin: computation from the bottom, other busy work (communication,
	// copies, sets) above it. No tooltip per bin: 480 titles per strip would
	// double the page for little.
	anyOther := false
	for i, v := range tl.Busy {
		comp := v
		if i < len(tl.Compute) {
			comp = min(tl.Compute[i], v)
		}
		x0 := left + bw*float64(i)
		s.rect(x0, 6+30*(1-comp), bw, 30*comp, cCompute, "")
		if v > comp {
			s.rect(x0, 6+30*(1-v), bw, 30*(v-comp), cComm, "")
			anyOther = true
		}
	}
	x := func(t model.Time) float64 { return left + float64(t-tl.Start)/span*(w-left-4) }
	causes := map[string]bool{}
	for _, g := range gaps {
		cl, ok := causeClass[g.cause]
		if !ok {
			cl = cOther
		}
		causes[g.cause] = true
		x0, x1 := x(g.start), x(g.end)
		s.rect(x0, 40, max(x1-x0, 1.5), 8, cl, g.note)
	}
	for _, st := range steps {
		if st.Rank == tl.Rank && st.Start >= tl.Start && st.Start <= tl.End {
			s.line(x(st.Start), 2, x(st.Start), 38, "step")
		}
	}
	names := make([]string, 0, len(causes))
	for c := range causes {
		names = append(names, c)
	}
	sort.Strings(names)
	lx := left
	keys := []string{"computation"}
	if anyOther {
		keys = append(keys, "communication / copies")
	}
	for i, k := range keys {
		s.key(lx, 52, 10, 10, []string{cCompute, cComm}[i], k)
		s.text(lx+14, 61, "start", "legend", k)
		lx += 30 + 7*float64(len(k))
	}
	lx += 10
	for _, c := range names {
		cl, ok := causeClass[c]
		if !ok {
			cl = cOther
		}
		s.key(lx, 52, 10, 10, cl, c)
		s.text(lx+14, 61, "start", "legend", c)
		lx += 30 + 7*float64(len(c))
	}
	s.text(w-4, 61, "end", "tick", model.Duration(span).String())
	return s.String()
}

func kernelClass(c string) string {
	switch c {
	case "communication":
		return cComm
	case "computation":
		return cCompute
	}
	return cOther
}

func writeKernelsPlot(p *page, r *model.Report) {
	if len(r.Kernels) == 0 {
		return
	}
	n := min(len(r.Kernels), 12)
	var rows []hbar
	var total model.Duration
	for _, k := range r.Kernels {
		total += k.Total
	}
	for _, k := range r.Kernels[:n] {
		cl, class := cCompute, ""
		if k.HasStats {
			cl, class = kernelClass(k.Class), ", "+k.Class
		}
		rows = append(rows, hbar{label: export.Shorten(k.Name), value: fmt.Sprintf("%s (%.1f%%), %d×%s", k.Total, pct(k.Total, total), k.Count, class),
			segs: []seg{{v: float64(k.Total), class: cl, tip: fmt.Sprintf("%s: %s in %d launches", export.Shorten(k.Name), k.Total, k.Count)}}})
	}
	p.f("<h2 id=\"kernels\">Top kernels</h2>\n%s\n", hbars("Top kernels by total time", rows, float64(r.Kernels[0].Total), []seg{{class: cCompute, label: "computation"}, {class: cComm, label: "communication"}}))
}

// stepGaps returns, per step, the time from its end to the start of the
// next step of its rank (0 for the last, or when steps overlap).
func stepGaps(steps []model.StepSummary) []model.Duration {
	byRank := map[int][]int{}
	for i, st := range steps {
		byRank[st.Rank] = append(byRank[st.Rank], i)
	}
	gaps := make([]model.Duration, len(steps))
	for _, idx := range byRank {
		sort.SliceStable(idx, func(a, b int) bool { return steps[idx[a]].Start < steps[idx[b]].Start })
		for j := 0; j+1 < len(idx); j++ {
			if g := steps[idx[j+1]].Start.Sub(steps[idx[j]].End); g > 0 {
				gaps[idx[j]] = g
			}
		}
	}
	return gaps
}

func writeSteps(p *page, r *model.Report, o export.Options) {
	steps := r.Summary.Steps
	if len(steps) == 0 {
		return
	}
	gaps := stepGaps(steps)
	n := len(steps)
	if n > 48 && !o.Full {
		n = 48
	}
	var rows []hbar
	var maxD float64
	for i, st := range steps[:n] {
		maxD = max(maxD, float64(st.End.Sub(st.Start)+gaps[i]))
	}
	anyGap := false
	for i, st := range steps[:n] {
		d := st.End.Sub(st.Start)
		idle := d - st.GPUBusy
		lbl := st.Name
		if st.Rank != model.NoRank {
			lbl = fmt.Sprintf("rank %d %s", st.Rank, st.Name)
		}
		val := fmt.Sprintf("%s, GPU busy %.1f%%", d, pct(st.GPUBusy, d))
		if gaps[i] > 0 {
			val += ", " + gaps[i].String() + " to next"
			anyGap = true
		}
		rows = append(rows, hbar{label: lbl, value: val, segs: []seg{
			{v: float64(st.GPUBusy), class: cCompute, tip: "GPU busy " + st.GPUBusy.String()},
			{v: float64(idle), class: cIdle, tip: "GPU idle " + idle.String()},
			{v: float64(gaps[i]), class: cBetween, tip: "between this step and the next: " + gaps[i].String()}}})
	}
	p.f("<h2 id=\"steps\">Steps</h2>\n")
	if n < len(steps) {
		p.f("<p class=\"muted\">First %d of %d steps.</p>\n", n, len(steps))
	}
	legend := []seg{{class: cCompute, label: "GPU busy"}, {class: cIdle, label: "GPU idle"}}
	if anyGap {
		legend = append(legend, seg{class: cBetween, label: "between steps"})
	}
	p.f("%s\n", hbars("Step time: GPU busy and idle per step", rows, maxD, legend))
}

func writeMemory(p *page, r *model.Report) {
	var ss []series
	for _, m := range r.Summary.Memory {
		if len(m.Series) == 0 || m.PeakAllocated < 0 {
			continue
		}
		t0 := m.Series[0].Time
		var alloc, res []point
		for _, pt := range m.Series {
			x := float64(pt.Time-t0) / 1e6
			if pt.Allocated >= 0 {
				alloc = append(alloc, point{x, float64(pt.Allocated) / (1 << 30)})
			}
			if pt.Reserved >= 0 {
				res = append(res, point{x, float64(pt.Reserved) / (1 << 30)})
			}
		}
		name := devLabel(m.Rank, m.Device)
		ss = append(ss, series{name: name + " allocated", class: cCompute, pts: alloc}, series{name: name + " reserved", class: cMemory, dashed: true, pts: res})
		if len(ss) >= 4 {
			break
		}
	}
	if len(ss) == 0 {
		return
	}
	p.f("<h2 id=\"memory\">Device memory</h2>\n%s\n", lineChart("Allocator totals over time (GiB)", "ms from the first allocator event", "GiB", ss, false, func(f float64) string { return plain(f) }))
}

func sizeLabel(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.0fG", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.0fM", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.0fK", b/(1<<10))
	}
	return fmt.Sprintf("%.0f", b)
}

// expectedBusBW returns the expected plateau the nccl-bandwidth rule
// compared a collective with (0 = none).
func expectedBusBW(r *model.Report, collective string) float64 {
	best := 0.0
	for _, f := range r.Findings {
		if f.Rule != "nccl-bandwidth" {
			continue
		}
		m, ok := f.Metric("expected_busbw")
		if !ok || m.Value <= 0 {
			continue
		}
		if strings.Contains(f.Title, collective) {
			return m.Value
		}
		if best == 0 {
			best = m.Value
		}
	}
	return best
}

func writeBench(p *page, r *model.Report) {
	if len(r.Bench) == 0 {
		return
	}
	p.f("<h2 id=\"bench\">Collective benchmarks</h2>\n")
	for _, ib := range r.Bench {
		for i, run := range ib.Bench.Runs {
			var oop, inp []point
			for _, row := range run.Rows {
				if row.SizeBytes <= 0 {
					continue
				}
				if row.OutOfPlace.Present {
					oop = append(oop, point{float64(row.SizeBytes), row.OutOfPlace.BusBWGBps})
				}
				if row.InPlace.Present {
					inp = append(inp, point{float64(row.SizeBytes), row.InPlace.BusBWGBps})
				}
			}
			if len(oop)+len(inp) == 0 {
				continue
			}
			ss := []series{{name: "out-of-place", class: cCompute, marker: "circle", pts: oop}, {name: "in-place", class: cComm, marker: "square", pts: inp}}
			if exp := expectedBusBW(r, run.Collective); exp > 0 {
				lo, hi := oop, oop
				if len(lo) == 0 {
					lo, hi = inp, inp
				}
				ss = append(ss, series{name: fmt.Sprintf("expected plateau %s GB/s", plain(exp)), class: "c-ref", dashed: true,
					pts: []point{{lo[0].x, exp}, {hi[len(hi)-1].x, exp}}})
			}
			title := fmt.Sprintf("%s: bus bandwidth vs message size (%s, run %d, %d ranks)", run.Collective, baseName(ib.Path), i+1, run.Ranks)
			p.f("<h3>%s</h3>\n%s\n", esc(title), lineChart(title, "message size (bytes)", "busbw GB/s", ss, true, sizeLabel))
		}
	}
}

func writeFindings(p *page, r *model.Report, groups []*export.RuleGroup, o export.Options) {
	if len(groups) == 0 {
		return
	}
	p.f("<h2 id=\"findings\">Findings</h2>\n")
	tls := map[[2]int]model.DeviceTimeline{}
	for _, tl := range r.Summary.Timelines {
		tls[[2]int{tl.Rank, int(tl.Device)}] = tl
	}
	evLimit := 5
	if o.Full {
		evLimit = -1
	}
	refs := findingRefs(r)
	for _, g := range groups {
		f := g.Worst
		p.f("<section class=\"finding %s\" id=\"rule-%s\">\n<h3><span class=\"sev-%s\">[%s]</span> %s</h3>\n", f.Severity, esc(g.Rule), f.Severity, f.Severity, esc(f.Title))
		p.f("<p>Rule %s (this finding: %s), layer %s, confidence %s", code(g.Rule), code(refs[f]), esc(string(f.Layer)), esc(string(f.Confidence)))
		if len(g.Findings) > 1 {
			p.f("; %d findings%s, the worst shown", len(g.Findings), export.ScopeOf(g))
		}
		p.f(".</p>\n<p>%s</p>\n", esc(f.Message))
		if len(f.Metrics) > 0 {
			p.f("<details><summary>Metrics</summary>\n<table><tr><th>metric</th><th>value</th></tr>\n")
			for _, m := range f.Metrics {
				p.f("<tr><td>%s</td><td class=\"n\">%s</td></tr>\n", code(m.Name), esc(export.FormatMetric(m)))
			}
			p.f("</table>\n</details>\n")
		}
		if len(f.Evidence) > 0 {
			if ev := f.Evidence[0]; ev.End > ev.Start {
				if tl, ok := tls[[2]int{ev.Rank, int(ev.Device)}]; ok {
					p.f("%s\n", evidenceStrip(tl, f))
				}
			}
			p.f("<ul>\n")
			for i, ev := range f.Evidence {
				if evLimit >= 0 && i == evLimit {
					p.f("<li class=\"muted\">… %d more windows (--detail full)</li>\n", len(f.Evidence)-evLimit)
					break
				}
				p.f("<li>%s: %s</li>\n", esc(export.EvidenceWhere(r, ev)), esc(ev.Note))
			}
			p.f("</ul>\n")
			if o.Perfetto != "" {
				p.f("%s", perfettoLink(o.Perfetto, refs[f]))
			}
		}
		if f.Recommendation != "" {
			p.f("<p><strong>How to fix:</strong> %s</p>\n", esc(f.Recommendation))
		}
		if len(g.Findings) > 1 {
			p.f("<details><summary>All %d findings of %s</summary>\n<ul>\n", len(g.Findings), esc(g.Rule))
			for _, o := range g.Findings {
				p.f("<li><span class=\"sev-%s\">%s</span> %s %s</li>\n", o.Severity, o.Severity, code(refs[o]), esc(o.Title))
			}
			p.f("</ul>\n</details>\n")
		}
		p.f("</section>\n")
	}
}

// evidenceStrip draws a finding's evidence windows on its device's span.
func evidenceStrip(tl model.DeviceTimeline, f *model.Finding) string {
	const w, left, h = 900.0, 110.0, 30.0
	label := devLabel(tl.Rank, tl.Device)
	s := newSVG(w, h, "Evidence windows of "+f.Rule+" on "+label)
	s.text(left-6, 19, "end", "label", label)
	s.rect(left, 6, w-left-4, 18, cIdle, "device span "+model.Duration(tl.End-tl.Start).String())
	span := float64(tl.End - tl.Start)
	for _, ev := range f.Evidence {
		if ev.Rank != tl.Rank || ev.Device != tl.Device || ev.End <= ev.Start {
			continue
		}
		x0 := left + float64(ev.Start-tl.Start)/span*(w-left-4)
		x1 := left + float64(ev.End-tl.Start)/span*(w-left-4)
		x0 = min(max(x0, left), w-4)
		x1 = min(max(x1, left), w-4)
		s.rect(x0, 6, max(x1-x0, 1.5), 18, "c-sync", ev.Note)
	}
	return s.String()
}

func writeTable(p *page, t export.Table) {
	p.f("<h3 id=\"table-%s\">%s</h3>\n", esc(t.ID), esc(t.Title))
	if t.Note != "" {
		p.f("<p class=\"muted\">%s</p>\n", esc(t.Note))
	}
	p.f("<table>\n<tr>")
	for _, h := range t.Head {
		p.f("<th>%s</th>", esc(h))
	}
	p.f("</tr>\n")
	for _, row := range t.Rows {
		p.f("<tr>")
		for _, c := range row {
			if c.Name {
				p.f("<td>%s</td>", code(c.Text))
			} else {
				p.f("<td class=\"n\">%s</td>", esc(c.Text))
			}
		}
		p.f("</tr>\n")
	}
	p.f("</table>\n")
	if t.More > 0 {
		p.f("<p class=\"muted\">%d more rows (--detail full or the JSON report).</p>\n", t.More)
	}
}

func writeInputs(p *page, r *model.Report) {
	p.f("<h2 id=\"inputs\">Inputs and trace health</h2>\n<table>\n<tr><th>input</th><th>format</th><th>rank</th><th>producer</th><th>holds</th><th>warnings</th></tr>\n")
	for i, in := range r.Inputs {
		holds, warns := "", 0
		if i < len(r.Health) {
			holds, warns = strings.Join(r.Health[i].Capabilities, ", "), r.Health[i].Warnings
		}
		rank := "-"
		if in.Rank != model.NoRank {
			rank = fmt.Sprint(in.Rank)
		}
		p.f("<tr><td>%s</td><td>%s</td><td class=\"n\">%s</td><td>%s</td><td>%s</td><td class=\"n\">%d</td></tr>\n", code(baseName(in.Path)), esc(string(in.Format)), rank, esc(in.Producer), esc(holds), warns)
	}
	p.f("</table>\n")
	if len(r.NotMeasurable) > 0 {
		p.f("<h3>Not measurable</h3>\n<ul>\n")
		for _, n := range r.NotMeasurable {
			p.f("<li>%s: %s</li>\n", code(n.Rule), esc(n.Reason))
		}
		p.f("</ul>\n")
	}
	if len(r.Warnings) > 0 {
		p.f("<h3>Import warnings (%d)</h3>\n<ul>\n", len(r.Warnings))
		for i, w := range r.Warnings {
			if i == 20 {
				p.f("<li class=\"muted\">… %d more (see the JSON report)</li>\n", len(r.Warnings)-20)
				break
			}
			p.f("<li>%s %s: %s</li>\n", code(baseName(w.File)), esc(w.Position), esc(w.Message))
		}
		p.f("</ul>\n")
	}
}
