package breakdown

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Window names.
const (
	WindowTrace = "trace"
	WindowHTA   = "hta"
)

// Compute returns the breakdown of every device of every rank and the
// per-name kernel totals of the whole set, for the given window ("trace" or
// "hta").
func Compute(set *model.TraceSet, window string) ([]model.DeviceSummary, []model.KernelSummary) {
	var devs []model.DeviceSummary
	totals := map[string]*model.KernelSummary{}
	for _, t := range set.Traces {
		if window == WindowHTA {
			d, ok := htaRank(t, totals)
			if ok {
				devs = append(devs, d)
			}
			continue
		}
		for i := range t.Kernels {
			k := &t.Kernels[i]
			addKernel(totals, t.Str(k.Name), k.End.Sub(k.Start))
		}
		ids, byDev := detectors.DeviceActivities(t)
		for _, id := range ids {
			s := summarize(byDev[id])
			s.Rank = t.Rank
			s.Device = id
			if d, ok := t.Device(id); ok {
				s.Name = d.Name
			}
			devs = append(devs, s)
		}
	}
	return devs, sortKernels(totals)
}

func addKernel(totals map[string]*model.KernelSummary, name string, d model.Duration) {
	ks := totals[name]
	if ks == nil {
		ks = &model.KernelSummary{Name: name, Min: d, Max: d}
		totals[name] = ks
	}
	ks.Count++
	ks.Total += d
	ks.Min = min(ks.Min, d)
	ks.Max = max(ks.Max, d)
}

func sortKernels(totals map[string]*model.KernelSummary) []model.KernelSummary {
	out := make([]model.KernelSummary, 0, len(totals))
	for _, k := range totals {
		out = append(out, *k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Total != out[j].Total {
			return out[i].Total > out[j].Total
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// summarize computes the trace-window breakdown of one device's activities,
// which are in start order (ByDevice keeps Activities' order): the busy
// unions are accumulated as the activities stream by, without building an
// interval list per class (four lists of every activity, 16 bytes each plus
// the unions' copies, were 590 MB allocated on 2 M kernels).
func summarize(acts detectors.ActList) model.DeviceSummary {
	var all, comp, comm, mem busy
	var s model.DeviceSummary
	first := true
	for i := range acts.Len() {
		a := acts.At(i)
		if a.IsKernel {
			s.Kernels++
		} else {
			s.MemOps++
		}
		if first || a.Start < s.Start {
			s.Start = a.Start
		}
		if first || a.End > s.End {
			s.End = a.End
		}
		first = false
		all.add(a.Start, a.End)
		switch {
		case a.Class == model.KernelComm:
			comm.add(a.Start, a.End)
		case a.Class == model.KernelMemory:
			mem.add(a.Start, a.End)
		case a.Class.Compute():
			comp.add(a.Start, a.End)
		}
	}
	s.Span = s.End.Sub(s.Start)
	s.Busy = all.total()
	s.Idle = s.Span - s.Busy
	s.Compute = comp.total()
	s.Communication = comm.total()
	s.Memory = mem.total()
	s.NonCompute = s.Busy - s.Compute
	return s
}

// busy is the length of the union of intervals added in start order: what
// detectors.Total(detectors.Union(ivs)) gives for such a list (empty
// intervals dropped, touching ones merged), in constant memory.
type busy struct {
	start, end model.Time
	open       bool
	sum        model.Duration
}

func (b *busy) add(start, end model.Time) {
	if end <= start {
		return
	}
	if b.open && start <= b.end {
		b.end = max(b.end, end)
		return
	}
	if b.open {
		b.sum += b.end.Sub(b.start)
	}
	b.start, b.end, b.open = start, end, true
}

func (b *busy) total() model.Duration {
	if b.open {
		return b.sum + b.end.Sub(b.start)
	}
	return b.sum
}

// htaRank computes HTA's temporal breakdown of one rank (all devices
// together) and adds HTA's per-name totals (kernels and memory activity).
func htaRank(t *model.Trace, totals map[string]*model.KernelSummary) (model.DeviceSummary, bool) {
	launchStart := map[[2]int64]model.Time{}
	for i := range t.APICalls {
		a := &t.APICalls[i]
		if a.Correlation != 0 {
			k := [2]int64{int64(t.CallScope(a)), a.Correlation}
			if _, dup := launchStart[k]; !dup {
				launchStart[k] = a.Start
			}
		}
	}
	cutoff, hasCutoff := lastStepStart(t)
	keep := func(scope int32, corr int64) bool {
		if corr == 0 {
			return false
		}
		ls, ok := launchStart[[2]int64{int64(scope), corr}]
		if !ok {
			return false
		}
		return !hasCutoff || ls < cutoff
	}
	var all, comp []model.Interval
	var s model.DeviceSummary
	s.Rank = t.Rank
	s.Device = model.NoDevice
	first := true
	clock := newHTAClock(t)
	add := func(start, end model.Time, name string, isKernel bool) {
		start, end = clock.cut(start, end)
		if first || start < s.Start {
			s.Start = start
		}
		if first || end > s.End {
			s.End = end
		}
		first = false
		iv := model.Interval{Start: start, End: end}
		all = append(all, iv)
		c, ok := classifyHTA(name)
		if ok && c.Compute() {
			comp = append(comp, iv)
		}
		addKernel(totals, name, end.Sub(start))
		if isKernel {
			s.Kernels++
		} else {
			s.MemOps++
		}
	}
	for i := range t.Kernels {
		k := &t.Kernels[i]
		if keep(k.CorrScope, k.Correlation) {
			add(k.Start, k.End, t.Str(k.Name), true)
		}
	}
	for i := range t.MemOps {
		m := &t.MemOps[i]
		if keep(m.CorrScope, m.Correlation) {
			name := t.Str(m.Name)
			if name == "" {
				name = htaMemName(m)
			}
			add(m.Start, m.End, name, false)
		}
	}
	if first {
		return s, false
	}
	if len(t.Devices) > 0 {
		s.Device = t.Devices[0].ID
		s.Name = t.Devices[0].Name
		if ids := t.GPUDevices(); len(ids) > 0 {
			s.Device = ids[0]
			if d, ok := t.Device(ids[0]); ok {
				s.Name = d.Name
			}
		}
	}
	s.Span = s.End.Sub(s.Start)
	s.Busy = detectors.Total(detectors.Union(all))
	s.Idle = s.Span - s.Busy
	s.Compute = detectors.Total(detectors.Union(comp))
	s.NonCompute = s.Span - s.Compute - s.Idle
	return s, true
}

// htaClock converts activities to whole microseconds as HTA does for traces
// with fractional timestamps: it reads ts and dur as float64 microseconds
// (as written in the file: relative to baseTimeNanoseconds when the file has
// one), rounds the start up and the end (ts + dur, in float64) down, so a
// sub-microsecond activity can come out empty or negative. The float64
// rounding matters: an epoch timestamp such as 1712195495519689.047 has a
// resolution of 0.25 µs. Integer-microsecond traces are unchanged.
type htaClock struct {
	base model.Time
}

func newHTAClock(t *model.Trace) htaClock {
	var c htaClock
	if v, err := strconv.ParseInt(t.Meta["baseTimeNanoseconds"], 10, 64); err == nil {
		c.base = model.Time(v)
	}
	return c
}

// micros returns the float64 that Python's float() gives for the decimal
// microsecond text of ns.
func micros(ns int64) float64 {
	neg := ns < 0
	if neg {
		ns = -ns
	}
	s := strconv.FormatInt(ns/1000, 10) + "." + fmt.Sprintf("%03d", ns%1000)
	f, _ := strconv.ParseFloat(s, 64)
	if neg {
		f = -f
	}
	return f
}

func (c htaClock) cut(start, end model.Time) (model.Time, model.Time) {
	us := model.Time(model.Microsecond)
	if (start-c.base)%us == 0 && (end-start)%us == 0 {
		return start, end
	}
	ts := micros(int64(start - c.base))
	dur := micros(int64(end - start))
	s := model.Time(math.Ceil(ts))*us + c.base
	e := model.Time(math.Floor(ts+dur))*us + c.base
	return s, e
}

func htaMemName(m *model.MemOp) string {
	if m.Kind == model.MemSet {
		return "Memset (Device)"
	}
	return "Memcpy " + m.Kind.String()
}

// lastStepStart returns the start of the last ProfilerStep range.
func lastStepStart(t *model.Trace) (model.Time, bool) {
	var last model.Time
	found := false
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Kind != model.RangeStep || r.Thread == model.NoThread {
			continue
		}
		if !strings.HasPrefix(t.Str(r.Name), "ProfilerStep#") {
			continue
		}
		if !found || r.Start > last {
			last = r.Start
			found = true
		}
	}
	return last, found
}
