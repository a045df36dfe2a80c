package html

import (
	"fmt"
	"sort"

	"github.com/tracedx/tracedx/model"
)

// Serving plots: per inference-engine instance of a job / server log, its
// prompt and generation throughput, requests running and waiting, and KV
// cache usage over time, with preemptions and OOMs marked on the time axis.

const (
	// maxPlotPoints caps the points of one plotted series; longer series
	// are downsampled keeping each bucket's minimum and maximum.
	maxPlotPoints = 600
	// maxServingEngines caps the engines plotted (three plots each).
	maxServingEngines = 4
	// markersUpTo: series this short get a marker on each point (a single
	// stats line is then still visible).
	markersUpTo = 60
)

func writeServing(p *page, r *model.Report) {
	plotted, skipped := 0, 0
	for _, in := range r.JobLogs {
		for _, es := range in.JobLog.Series() {
			if plotted == maxServingEngines {
				skipped++
				continue
			}
			if plotted == 0 {
				p.f("<h2 id=\"serving\">Serving (engine logs)</h2>\n")
				p.f("<p>Per engine instance: throughput, requests running and waiting, and KV cache usage as its stats lines print them; preemptions (dashed) and out-of-memory errors (solid) are vertical lines, their counts in the legend; an event line without a time of its own is placed at the stats line before it.</p>\n")
			}
			plotted++
			writeEngine(p, in, es)
		}
	}
	if skipped > 0 {
		p.f("<p class=\"muted\">%d more engine instance(s) not plotted; the serving summary table lists them all.</p>\n", skipped)
	}
}

// engineAxis places stats and events of one engine on the x axis: seconds
// (minutes, hours on long logs) from the first stats line when every stats
// line has a time, else log line numbers. On a time axis an event line without a time of its own (a
// traceback's OOM) is placed at the last stats line before it.
type engineAxis struct {
	timed bool
	t0    model.Time
	stats []model.EngineStat
	// unit is the time unit in seconds (1, 60 or 3600) and name its name.
	unit float64
	name string
}

func newEngineAxis(stats []model.EngineStat) engineAxis {
	a := engineAxis{timed: len(stats) > 0, stats: stats, unit: 1, name: "s"}
	var t1 model.Time
	for i, s := range stats {
		if !s.HasTime {
			return engineAxis{stats: stats}
		}
		if i == 0 || s.Time < a.t0 {
			a.t0 = s.Time
		}
		t1 = max(t1, s.Time)
	}
	switch span := t1.Sub(a.t0).Seconds(); {
	case span > 3*3600:
		a.unit, a.name = 3600, "h"
	case span > 10*60:
		a.unit, a.name = 60, "min"
	}
	return a
}

// x is the position of a line; false when it has no place on a time axis
// (no time and no stats line before it).
func (a engineAxis) x(t model.Time, hasTime bool, line int) (float64, bool) {
	switch {
	case !a.timed:
		return float64(line), true
	case hasTime:
		return t.Sub(a.t0).Seconds() / a.unit, true
	}
	i := sort.Search(len(a.stats), func(i int) bool { return a.stats[i].Line > line })
	if i == 0 {
		return 0, false
	}
	return a.stats[i-1].Time.Sub(a.t0).Seconds() / a.unit, true
}

func (a engineAxis) label() string {
	if a.timed {
		return a.name + " from the first stats line"
	}
	return "log line (the stats lines have no time)"
}

// engineEvents returns the preemptions and OOMs of the log that belong to
// es (OOMs and events without an instance id belong to every instance), and
// how many had no time on a time axis.
func engineEvents(j *model.JobLog, es model.EngineSeries, a engineAxis) ([]events, int) {
	pre := events{name: "preemptions", class: "c-sync", dashed: true}
	oom := events{name: "OOMs", class: "c-ref"}
	untimed := 0
	for _, e := range j.Events {
		ev := &pre
		switch {
		case e.Kind == "oom":
			ev = &oom
		case e.Kind != "preemption" || e.Engine != es.Engine || (e.ID != "" && e.ID != es.ID):
			continue
		}
		x, ok := a.x(e.Time, e.HasTime, e.Line)
		if !ok {
			untimed++
			continue
		}
		ev.xs = append(ev.xs, x)
		ev.ns = append(ev.ns, max(e.Count, 1))
	}
	sortEvents(&pre)
	sortEvents(&oom)
	return []events{pre, oom}, untimed
}

// sortEvents orders an event kind by x (insertion sort keeps equal xs in
// file order; logs are nearly sorted already).
func sortEvents(ev *events) {
	for i := 1; i < len(ev.xs); i++ {
		for k := i; k > 0 && ev.xs[k] < ev.xs[k-1]; k-- {
			ev.xs[k], ev.xs[k-1] = ev.xs[k-1], ev.xs[k]
			ev.ns[k], ev.ns[k-1] = ev.ns[k-1], ev.ns[k]
		}
	}
}

func writeEngine(p *page, in model.InputJobLog, es model.EngineSeries) {
	a := newEngineAxis(es.Stats)
	evs, untimed := engineEvents(in.JobLog, es, a)
	pick := func(name, class string, dashed bool, v func(model.EngineStat) float64) series {
		sr := series{name: name, class: class, dashed: dashed}
		for _, st := range es.Stats {
			if y := v(st); y >= 0 {
				x, _ := a.x(st.Time, st.HasTime, st.Line)
				sr.pts = append(sr.pts, point{x, y})
			}
		}
		if len(sr.pts) <= markersUpTo {
			sr.marker = "circle"
		}
		sr.pts = downsample(sr.pts, maxPlotPoints)
		return sr
	}
	tput := []series{
		pick("generation", cCompute, false, func(s model.EngineStat) float64 { return s.GenTPS }),
		pick("prompt", cComm, true, func(s model.EngineStat) float64 { return s.PromptTPS }),
	}
	queue := []series{
		pick("running", cCompute, false, func(s model.EngineStat) float64 { return float64(s.Running) }),
		pick("waiting", cComm, true, func(s model.EngineStat) float64 { return float64(s.Waiting) }),
	}
	if sw := pick("swapped", cMemory, true, func(s model.EngineStat) float64 { return float64(s.Swapped) }); maxY(sw.pts) > 0 {
		queue = append(queue, sw)
	}
	kv := []series{pick("KV cache used", cMemory, false, func(s model.EngineStat) float64 { return 100 * s.KVUsage })}

	name := fmt.Sprintf("%s, %s", es.Name(), baseName(in.Path))
	p.f("<h3>%s</h3>\n", esc(name))
	if in.JobLog.StatsStride > 1 {
		p.f("<p class=\"muted\">1 in %d stats lines of this log was kept (the importer thins huge logs).</p>\n", in.JobLog.StatsStride)
	}
	if untimed > 0 {
		p.f("<p class=\"muted\">%d preemption / OOM line(s) before the first stats line and without a time are not marked.</p>\n", untimed)
	}
	xFmt := func(f float64) string { return plain(f) }
	for _, c := range []struct {
		title, unit string
		ss          []series
	}{
		{"Engine throughput (tokens/s)", "tokens/s", tput},
		{"Engine requests running and waiting", "requests", queue},
		{"KV cache usage (%)", "% used", kv},
	} {
		if countPoints(c.ss) == 0 {
			p.f("<p class=\"muted\">%s: not printed by this engine.</p>\n", esc(c.title))
			continue
		}
		title := c.title + ": " + name
		p.f("%s\n", eventChart(title, a.label(), c.unit, c.ss, evs, false, xFmt))
	}
}

func countPoints(ss []series) int {
	n := 0
	for _, sr := range ss {
		n += len(sr.pts)
	}
	return n
}

func maxY(pts []point) float64 {
	m := 0.0
	for _, p := range pts {
		m = max(m, p.y)
	}
	return m
}

// downsample returns at most n points of pts (n even, at least 4): pts
// itself when short enough, else its first and last points and, per bucket
// of consecutive points between them, the bucket's minimum and maximum in x
// order, so that spikes and dips stay visible and every plot of an engine
// spans the same x range.
func downsample(pts []point, n int) []point {
	if len(pts) <= n {
		return pts
	}
	inner := pts[1 : len(pts)-1]
	buckets := (n - 2) / 2
	out := make([]point, 0, n)
	out = append(out, pts[0])
	for b := 0; b < buckets; b++ {
		lo, hi := b*len(inner)/buckets, (b+1)*len(inner)/buckets
		iMin, iMax := lo, lo
		for i := lo + 1; i < hi; i++ {
			if inner[i].y < inner[iMin].y {
				iMin = i
			}
			if inner[i].y > inner[iMax].y {
				iMax = i
			}
		}
		switch {
		case iMin == iMax:
			out = append(out, inner[iMin])
		case iMin < iMax:
			out = append(out, inner[iMin], inner[iMax])
		default:
			out = append(out, inner[iMax], inner[iMin])
		}
	}
	return append(out, pts[len(pts)-1])
}
