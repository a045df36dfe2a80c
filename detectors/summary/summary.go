// Package summary computes the summary tables of a report from the model:
// per-kernel statistics (the shape of nsys' cuda_gpu_kern_sum), annotated
// ranges with the GPU time they launched, host API calls, copies and sets
// by kind, CPU operator → GPU time, and allocator peaks per device.
//
// Tables are computed here once; the renderers in export only format them.
// Percentiles are model.Quantile's (linear interpolation, DuckDB's
// quantile_cont). Place: pipeline → summary → {detectors, model}.
package summary

import (
	"math"
	"sort"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// KernelStats are the statistics of one kernel name over the whole set.
type KernelStats struct {
	Stats  model.Stats
	Class  string
	Device model.DeviceID // NoDevice when the name ran on several devices or ranks
}

// Result is what Compute returns.
type Result struct {
	// Kernels maps a kernel name to its statistics over every kernel of the set.
	Kernels map[string]KernelStats
	Summary model.Summary
}

// Compute computes the summary tables of set.
func Compute(set *model.TraceSet) Result {
	res := Result{Kernels: kernelStats(set)}
	res.Summary.Ranges = ranges(set)
	res.Summary.API = apiCalls(set)
	res.Summary.Copies = copies(set)
	res.Summary.Ops = ops(set)
	res.Summary.Memory = memory(set)
	res.Summary.Timelines, res.Summary.Steps = timelines(set)
	return res
}

// Apply fills the statistics of the report's kernel rows whose count and
// total match what the summary saw (always in the trace window; in the hta
// window only the names HTA counted the same way).
func Apply(kernels []model.KernelSummary, stats map[string]KernelStats) {
	for i := range kernels {
		k := &kernels[i]
		s, ok := stats[k.Name]
		if !ok || s.Stats.Count != k.Count || s.Stats.Total != k.Total {
			continue
		}
		k.HasStats = true
		k.Median, k.P90, k.Stddev = s.Stats.Median, s.Stats.P90, s.Stats.Stddev
		k.Class, k.Device = s.Class, s.Device
	}
}

func kernelStats(set *model.TraceSet) map[string]KernelStats {
	out := map[string]KernelStats{}
	byName(set, func(t *model.Trace) int { return len(t.Kernels) },
		func(t *model.Trace, i int) model.StringID { return t.Kernels[i].Name },
		func(t *model.Trace, i int) int64 { return int64(t.Kernels[i].End.Sub(t.Kernels[i].Start)) },
		func(name string, runs []nameRun, d []int64) {
			// The device of the first kernel of the name, NoDevice when the
			// name ran on several devices or ranks.
			first := &set.Traces[runs[0].trace].Kernels[runs[0].rows[0]]
			ks := KernelStats{Stats: model.ComputeStats(d), Class: model.ClassifyKernel(name).String(), Device: first.Device}
			for _, r := range runs {
				t := set.Traces[r.trace]
				for _, i := range r.rows {
					if r.trace != runs[0].trace || t.Kernels[i].Device != first.Device {
						ks.Device = model.NoDevice
					}
				}
			}
			out[name] = ks
		})
	return out
}

// corrKey identifies a launch: (CorrScope, Correlation).
type corrKey struct {
	scope int32
	corr  int64
}

// launchedGPU returns the summed GPU time of the kernels and memory
// operations launched under each (scope, correlation).
func launchedGPU(t *model.Trace) map[corrKey]model.Duration {
	m := map[corrKey]model.Duration{}
	for i := range t.Kernels {
		if k := &t.Kernels[i]; k.Correlation != 0 {
			m[corrKey{k.CorrScope, k.Correlation}] += k.End.Sub(k.Start)
		}
	}
	for i := range t.MemOps {
		if o := &t.MemOps[i]; o.Correlation != 0 {
			m[corrKey{o.CorrScope, o.Correlation}] += o.End.Sub(o.Start)
		}
	}
	return m
}

// threadCalls holds one thread's API calls in start order with the prefix
// sums of the GPU time they launched.
type threadCalls struct {
	starts []model.Time
	prefix []model.Duration // prefix[i] = GPU time of calls[0:i]
}

func callsByThread(t *model.Trace) map[model.ThreadID]*threadCalls {
	gpu := launchedGPU(t)
	by := map[model.ThreadID]*threadCalls{}
	for i := range t.APICalls {
		c := &t.APICalls[i]
		tc := by[c.Thread]
		if tc == nil {
			tc = &threadCalls{prefix: []model.Duration{0}}
			by[c.Thread] = tc
		}
		tc.starts = append(tc.starts, c.Start)
		var g model.Duration
		if c.Correlation != 0 {
			g = gpu[corrKey{t.CallScope(c), c.Correlation}]
		}
		tc.prefix = append(tc.prefix, tc.prefix[len(tc.prefix)-1]+g)
	}
	for _, tc := range by {
		if !sort.SliceIsSorted(tc.starts, func(i, j int) bool { return tc.starts[i] < tc.starts[j] }) {
			// APICalls are sorted by Finalize; a hand-built trace may not be.
			return nil
		}
	}
	return by
}

// gpuIn returns the GPU time launched by calls on the thread starting in [start, end).
func (tc *threadCalls) gpuIn(start, end model.Time) model.Duration {
	lo := sort.Search(len(tc.starts), func(i int) bool { return tc.starts[i] >= start })
	hi := sort.Search(len(tc.starts), func(i int) bool { return tc.starts[i] >= end })
	return tc.prefix[hi] - tc.prefix[lo]
}

func summaryRange(k model.RangeKind) bool {
	return k == model.RangeUser || k == model.RangeNVTX || k == model.RangeStep
}

type rangeKey struct{ domain, name string }

type rangeAcc struct {
	kind model.RangeKind
	d    []int64
	gpu  model.Duration
	// noGPU is set when an instance's trace cannot attribute GPU time.
	noGPU bool
}

func ranges(set *model.TraceSet) []model.RangeSummary {
	acc := map[rangeKey]*rangeAcc{}
	for _, t := range set.Traces {
		var calls map[model.ThreadID]*threadCalls
		built := false
		for i := range t.Ranges {
			r := &t.Ranges[i]
			if !summaryRange(r.Kind) {
				continue
			}
			if !built {
				calls, built = callsByThread(t), true
			}
			key := rangeKey{t.Str(t.RangeTrack(r).Domain), t.Str(r.Name)}
			a := acc[key]
			if a == nil {
				a = &rangeAcc{kind: r.Kind}
				acc[key] = a
			}
			a.d = append(a.d, int64(r.End.Sub(r.Start)))
			if calls == nil || len(t.APICalls) == 0 || r.Thread == model.NoThread {
				a.noGPU = true
				continue
			}
			if tc := calls[r.Thread]; tc != nil {
				a.gpu += tc.gpuIn(r.Start, r.End)
			}
		}
	}
	if len(acc) == 0 {
		return nil
	}
	out := make([]model.RangeSummary, 0, len(acc))
	for k, a := range acc {
		rs := model.RangeSummary{Name: k.name, Domain: k.domain, Kind: a.kind, Stats: model.ComputeStats(a.d), GPU: a.gpu}
		if a.noGPU {
			rs.GPU = -1
		}
		out = append(out, rs)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Stats.Total != out[j].Stats.Total {
			return out[i].Stats.Total > out[j].Stats.Total
		}
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Domain < out[j].Domain
	})
	return out
}

func apiCalls(set *model.TraceSet) []model.APISummary {
	var out []model.APISummary
	byName(set, func(t *model.Trace) int { return len(t.APICalls) },
		func(t *model.Trace, i int) model.StringID { return t.CallName(&t.APICalls[i]) },
		func(t *model.Trace, i int) int64 { return int64(t.APICalls[i].End.Sub(t.APICalls[i].Start)) },
		func(name string, runs []nameRun, d []int64) {
			first := set.Traces[runs[0].trace]
			src := first.CallSource(&first.APICalls[runs[0].rows[0]]) // of the first call
			out = append(out, model.APISummary{Name: name, Source: src, Stats: model.ComputeStats(d)})
		})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Stats.Total != out[j].Stats.Total {
			return out[i].Stats.Total > out[j].Stats.Total
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// sizeBucket returns the SizeBuckets index of a copy of b bytes.
func sizeBucket(b int64) int {
	for i, lim := range model.SizeBuckets {
		if b < lim {
			return i
		}
	}
	return len(model.SizeBuckets)
}

func copies(set *model.TraceSet) []model.CopySummary {
	acc := map[model.MemOpKind]*model.CopySummary{}
	sized := map[model.MemOpKind]model.Duration{}
	for _, t := range set.Traces {
		for i := range t.MemOps {
			o := &t.MemOps[i]
			c := acc[o.Kind]
			if c == nil {
				c = &model.CopySummary{Kind: o.Kind, Bytes: -1, Sizes: make([]int64, len(model.SizeBucketLabels))}
				acc[o.Kind] = c
			}
			d := o.End.Sub(o.Start)
			c.Count++
			c.Total += d
			if o.Bytes < 0 {
				c.Unsized++
				continue
			}
			if c.Bytes < 0 {
				c.Bytes = 0
			}
			c.Bytes += o.Bytes
			sized[o.Kind] += d
			c.Sizes[sizeBucket(o.Bytes)]++
		}
	}
	if len(acc) == 0 {
		return nil
	}
	out := make([]model.CopySummary, 0, len(acc))
	for kind, c := range acc {
		c.GBps = math.NaN()
		if c.Bytes >= 0 && sized[kind] > 0 {
			c.GBps = float64(c.Bytes) / float64(sized[kind]) // bytes/ns = GB/s
		}
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

type opAcc struct {
	launches int64
	gpu      model.Duration
	kernels  map[string]*model.OpKernel
}

func ops(set *model.TraceSet) []model.OpSummary {
	acc := map[string]*opAcc{}
	for _, t := range set.Traces {
		parents, hasOps := model.KernelParents(t)
		if !hasOps {
			continue
		}
		for i := range t.Kernels {
			k := &t.Kernels[i]
			id := parents[i]
			if id == model.NoString {
				continue
			}
			name := t.Str(id)
			a := acc[name]
			if a == nil {
				a = &opAcc{kernels: map[string]*model.OpKernel{}}
				acc[name] = a
			}
			d := k.End.Sub(k.Start)
			a.launches++
			a.gpu += d
			kn := t.Str(k.Name)
			ok2 := a.kernels[kn]
			if ok2 == nil {
				ok2 = &model.OpKernel{Name: kn}
				a.kernels[kn] = ok2
			}
			ok2.Count++
			ok2.GPU += d
		}
	}
	if len(acc) == 0 {
		return nil
	}
	out := make([]model.OpSummary, 0, len(acc))
	for name, a := range acc {
		s := model.OpSummary{Name: name, Launches: a.launches, GPU: a.gpu}
		for _, k := range a.kernels {
			s.Kernels = append(s.Kernels, *k)
		}
		sort.Slice(s.Kernels, func(i, j int) bool {
			if s.Kernels[i].GPU != s.Kernels[j].GPU {
				return s.Kernels[i].GPU > s.Kernels[j].GPU
			}
			return s.Kernels[i].Name < s.Kernels[j].Name
		})
		if len(s.Kernels) > model.MaxOpKernels {
			s.Kernels = s.Kernels[:model.MaxOpKernels]
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].GPU != out[j].GPU {
			return out[i].GPU > out[j].GPU
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func memory(set *model.TraceSet) []model.MemorySummary {
	var out []model.MemorySummary
	for _, t := range set.Traces {
		byDev := map[model.DeviceID][]int{}
		var devs []model.DeviceID
		for i := range t.MemEvents {
			d := t.MemEvents[i].Device
			if d == model.NoDevice {
				continue
			}
			if _, ok := byDev[d]; !ok {
				devs = append(devs, d)
			}
			byDev[d] = append(byDev[d], i)
		}
		sort.Slice(devs, func(i, j int) bool { return devs[i] < devs[j] })
		for _, d := range devs {
			idx := byDev[d]
			m := model.MemorySummary{Rank: t.Rank, Device: d, PeakAllocated: -1, PeakReserved: -1, Events: int64(len(idx))}
			for _, i := range idx {
				e := &t.MemEvents[i]
				m.PeakAllocated = max(m.PeakAllocated, e.TotalAllocated)
				m.PeakReserved = max(m.PeakReserved, e.TotalReserved)
			}
			m.Series = series(t, idx)
			out = append(out, m)
		}
	}
	return out
}

// series reduces a device's allocator totals to at most MaxMemoryPoints
// points: the time range is cut into equal buckets and each bucket keeps its
// maxima (so peaks survive), at the bucket's first event time.
func series(t *model.Trace, idx []int) []model.MemoryPoint {
	if len(idx) == 0 {
		return nil
	}
	t0, t1 := t.MemEvents[idx[0]].Time, t.MemEvents[idx[0]].Time
	for _, i := range idx {
		t0 = min(t0, t.MemEvents[i].Time)
		t1 = max(t1, t.MemEvents[i].Time)
	}
	n := model.MaxMemoryPoints
	span := float64(t1-t0) + 1
	pts := make([]model.MemoryPoint, n)
	used := make([]bool, n)
	for _, i := range idx {
		e := &t.MemEvents[i]
		b := int(float64(e.Time-t0) / span * float64(n))
		b = min(max(b, 0), n-1)
		if !used[b] {
			used[b] = true
			pts[b] = model.MemoryPoint{Time: e.Time, Allocated: e.TotalAllocated, Reserved: e.TotalReserved}
			continue
		}
		p := &pts[b]
		p.Time = min(p.Time, e.Time)
		p.Allocated = max(p.Allocated, e.TotalAllocated)
		p.Reserved = max(p.Reserved, e.TotalReserved)
	}
	var out []model.MemoryPoint
	for b := range pts {
		if used[b] {
			out = append(out, pts[b])
		}
	}
	return out
}

// binnedUnion bins a union of intervals as it grows into the covered
// fraction (0..1, three decimals) of each of the model.TimelineBins equal
// bins of [start, end): intervals come in
// start order, and each interval of the union is binned once it is closed,
// so that the union itself is never held (on a capture with a gap between
// every two kernels it is as long as the activity list).
type binnedUnion struct {
	start model.Time
	w     float64
	out   []float64
	cur   model.Interval
	open  bool
}

func newBinnedUnion(start, end model.Time) *binnedUnion {
	return &binnedUnion{start: start, w: float64(end-start) / model.TimelineBins, out: make([]float64, model.TimelineBins)}
}

// add adds iv, which starts no earlier than every interval added before.
func (b *binnedUnion) add(iv model.Interval) {
	if iv.End <= iv.Start {
		return
	}
	if b.open && iv.Start <= b.cur.End {
		b.cur.End = max(b.cur.End, iv.End)
		return
	}
	if b.open {
		b.bin(b.cur)
	}
	b.cur, b.open = iv, true
}

func (b *binnedUnion) bin(iv model.Interval) {
	lo0 := float64(iv.Start - b.start)
	hi0 := float64(iv.End - b.start)
	for i := max(int(lo0/b.w), 0); i < model.TimelineBins && float64(i)*b.w < hi0; i++ {
		lo, hi := max(lo0, float64(i)*b.w), min(hi0, float64(i+1)*b.w)
		if hi > lo {
			b.out[i] += (hi - lo) / b.w
		}
	}
}

// shares returns the busy share of each bin, rounded to 0.001.
func (b *binnedUnion) shares() []float64 {
	if b.open {
		b.bin(b.cur)
		b.open = false
	}
	for i, v := range b.out {
		b.out[i] = math.Round(min(v, 1)*1000) / 1000
	}
	return b.out
}

// timelines bins each device's busy intervals and measures the GPU busy
// time inside each profiler step.
func timelines(set *model.TraceSet) ([]model.DeviceTimeline, []model.StepSummary) {
	var tls []model.DeviceTimeline
	var steps []model.StepSummary
	for _, t := range set.Traces {
		ids, byDev := detectors.DeviceActivities(t)
		hasSteps := false
		for i := range t.Ranges {
			if t.Ranges[i].Kind == model.RangeStep {
				hasSteps = true
				break
			}
		}
		var all []model.Interval // the busy union, for the steps only
		for _, id := range ids {
			acts := byDev[id]
			// The span of the non-empty activities bounds the bins; the
			// activities are in start order, so the unions are binned as
			// they grow.
			tl := model.DeviceTimeline{Rank: t.Rank, Device: id}
			seen := false
			for i := range acts.Len() {
				if a := acts.At(i); a.End > a.Start {
					if !seen {
						tl.Start, seen = a.Start, true
					}
					tl.End = max(tl.End, a.End)
				}
			}
			if !seen {
				continue
			}
			busy, comp := newBinnedUnion(tl.Start, tl.End), newBinnedUnion(tl.Start, tl.End)
			var u []model.Interval
			for i := range acts.Len() {
				a := acts.At(i)
				iv := model.Interval{Start: a.Start, End: a.End}
				busy.add(iv)
				if a.IsKernel && a.Class.Compute() {
					comp.add(iv)
				}
				if hasSteps {
					u = detectors.AddToUnion(u, iv)
				}
			}
			all = append(all, u...)
			tl.Busy, tl.Compute = busy.shares(), comp.shares()
			tls = append(tls, tl)
		}
		busy := detectors.UnionInPlace(all)
		for i := range t.Ranges {
			r := &t.Ranges[i]
			if r.Kind != model.RangeStep {
				continue
			}
			st := model.StepSummary{Rank: t.Rank, Name: t.Str(r.Name), Start: r.Start, End: r.End}
			lo := sort.Search(len(busy), func(j int) bool { return busy[j].End > r.Start })
			for j := lo; j < len(busy) && busy[j].Start < r.End; j++ {
				st.GPUBusy += model.Interval{Start: max(busy[j].Start, r.Start), End: min(busy[j].End, r.End)}.Len()
			}
			steps = append(steps, st)
		}
	}
	return tls, steps
}
