// Package commwait implements the comm-wait detector: communication that the
// GPU waits for. On one trace it measures exposed communication (collective
// kernel time not overlapped by computation) and collectives that take far
// longer than their peers of the same size (waiting for other ranks). Across
// the ranks of a TraceSet it matches collectives by process group, operation
// and order, aligns the ranks' clocks, and names the straggler rank.
//
// Place in the pipeline: detectors/all registers it; it reads the model only.
// Units: nanoseconds; parameters state their own units.
package commwait

import (
	"fmt"
	"sort"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Detector is the comm-wait rule.
var Detector = &detectors.Detector{
	ID:       "comm-wait",
	Title:    "Communication the GPU waits for",
	Layer:    model.LayerParallelism,
	Severity: model.SevWarning,
	Needs:    []model.Capability{model.CapCommKernels, model.CapCollectives},
	Formats:  detectors.TimelineFormats,
	Params: []detectors.Param{
		{Name: "exposed_warn_pct", Default: 10, Unit: "%", Doc: "exposed communication share of the GPU span at or above which the finding is a warning (info from 1%)"},
		{Name: "slow_factor", Default: 3, Unit: "x", Doc: "a collective slower than this multiple of the median of its (operation, size) group is counted as waiting"},
		{Name: "skew_warn_us", Default: 100, Unit: "µs", Doc: "mean arrival lateness of the straggler rank at or above which the cross-rank finding is a warning"},
		{Name: "skew_info_us", Default: 20, Unit: "µs", Doc: "mean arrival lateness of the straggler below which no cross-rank finding is reported"},
		{Name: "min_matched", Default: 3, Unit: "count", Doc: "matched collectives needed before ranks are compared"},
	},
	Doc: `Finds communication that the GPU waits for, in three ways:

1. Exposed communication, per device: the time communication kernels (NCCL,
   RCCL, ...) run while no computation kernel runs (the union of communication
   minus the union of computation). Overlapped communication is free; exposed
   communication adds to the step time.
2. Waiting collectives, per device: collectives of the same operation and size
   normally take about the same time; one that takes more than slow_factor times
   the median of its group spent the extra time waiting for a peer (or for the
   fabric). Only like is compared with like: the same (operation, size, group),
   or, when sizes are not recorded, the same position within each profiler
   step (needs 5 steps); otherwise this part is not measurable.
3. Stragglers, across the ranks of a job (several trace files given together,
   reported as "N of M ranks" when the world size is known): collectives are
   matched across ranks by process group, operation and size, then by sequence
   number (Kineto Seq / seq_num) when every collective of the stream has one,
   else by position within the profiler step (ProfilerStep#N, by name), else by
   order. Clocks are aligned per rank on the median difference of matched end
   times (a collective ends at about the same moment on every rank). A match
   whose aligned intervals do not overlap is rejected (counted in the
   message): it pairs different operations. The first matched collective after
   profiler start is reported apart (profiler-start skew) and left out. Each
   rank's arrival lateness is its aligned start minus the earliest rank's;
   the straggler is the rank the others waited for longest, with its mean
   lateness, the number of matches and one evidence window per rank.

Without communication kernels or collective records the rule is not measurable.

## How to fix
- Exposed communication: overlap it with computation (DDP gradient bucketing with
  bucket_cap_mb tuned, FSDP forward/backward prefetch, async tensor-parallel
  collectives), or reduce it (gradient compression, larger micro-batches per
  all-reduce, reduce-scatter instead of all-reduce with ZeRO).
- Waiting collectives and stragglers: find why the straggler rank is late — look
  at its own kernel-gap and gil-stall findings (data loading, host-side work,
  uneven batch sizes or sequence lengths, a slower or throttled GPU, a busy
  node); balance the work across ranks; check the fabric with nccl-tests
  (nccl-bandwidth).
`,
	Run: run,
}

func run(p *detectors.Pass) error {
	for _, t := range p.Set.Traces {
		exposed(p, t)
		if !waiting(p, t) {
			p.NotMeasurable("slow collectives: %s: message sizes are not recorded and the capture has fewer than 5 profiler steps, so collectives of different sizes cannot be told apart (record_param_comms with collective args, PyTorch 2.2+, records sizes)", t.Path)
		}
	}
	if len(p.Set.Timelines()) > 1 {
		stragglers(p)
	} else {
		p.NotMeasurable("stragglers: one trace only; give the traces of all ranks of the job together to compare arrival times")
	}
	return nil
}

// commOp is one communication activity on the GPU timeline.
type commOp struct {
	Start, End model.Time
	Device     model.DeviceID
	Stream     model.StreamID
	Op         model.CollOp
	Bytes      int64
	Group      string
	Seq        int64
}

// commOps returns the trace's GPU-side communication, preferring collective
// records (which carry metadata) and falling back to communication kernels.
func commOps(t *model.Trace) []commOp {
	var out []commOp
	seen := map[[2]int64]bool{}
	for i := range t.Collectives {
		c := &t.Collectives[i]
		if c.Source != model.CollFromKernel {
			continue
		}
		out = append(out, commOp{Start: c.Start, End: c.End, Device: c.Device, Stream: c.Stream, Op: c.Op, Bytes: c.Bytes, Group: t.Str(c.Group), Seq: c.Seq})
		seen[[2]int64{int64(c.Start), int64(c.Device)}] = true
	}
	classes := detectors.KernelClasses(t)
	for i := range t.Kernels {
		if classes[i] != model.KernelComm {
			continue
		}
		k := &t.Kernels[i]
		if seen[[2]int64{int64(k.Start), int64(k.Device)}] {
			continue
		}
		out = append(out, commOp{Start: k.Start, End: k.End, Device: k.Device, Stream: t.KernelStream(k), Op: model.CollOpFromName(t.Str(k.Name)), Bytes: -1, Seq: -1})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// exposed reports communication not overlapped by computation, per device.
// devExposure is one device's communication: the union of its
// communication, the part no computation overlaps, and the GPU span.
type devExposure struct {
	dev        model.DeviceID
	comm       model.Duration
	exposed    []model.Interval
	exposedLen model.Duration
	span       model.Duration
}

// exposure measures exposed communication per device (nil without communication).
func exposure(t *model.Trace) []devExposure {
	ops := commOps(t)
	if len(ops) == 0 {
		return nil
	}
	classes := detectors.KernelClasses(t)
	comp := map[model.DeviceID][]model.Interval{}
	span := map[model.DeviceID]model.Interval{}
	grow := func(dev model.DeviceID, s, e model.Time) {
		iv, ok := span[dev]
		if !ok {
			span[dev] = model.Interval{Start: s, End: e}
			return
		}
		span[dev] = model.Interval{Start: min(iv.Start, s), End: max(iv.End, e)}
	}
	for i := range t.Kernels {
		k := &t.Kernels[i]
		grow(k.Device, k.Start, k.End)
		if classes[i].Compute() {
			comp[k.Device] = append(comp[k.Device], model.Interval{Start: k.Start, End: k.End})
		}
	}
	for i := range t.MemOps {
		grow(t.MemOps[i].Device, t.MemOps[i].Start, t.MemOps[i].End)
	}
	comm := map[model.DeviceID][]model.Interval{}
	for _, o := range ops {
		comm[o.Device] = append(comm[o.Device], model.Interval{Start: o.Start, End: o.End})
	}
	var out []devExposure
	for _, dev := range sortedDevices(comm) {
		cu := detectors.Union(comm[dev])
		ex := detectors.Subtract(cu, detectors.Union(comp[dev]))
		out = append(out, devExposure{dev: dev, comm: detectors.Total(cu), exposed: ex, exposedLen: detectors.Total(ex), span: span[dev].Len()})
	}
	return out
}

// ExposedComm returns the trace's exposed communication summed over its
// devices; ok is false when the trace has no communication.
func ExposedComm(t *model.Trace) (d model.Duration, ok bool) {
	for _, e := range exposure(t) {
		d += e.exposedLen
		ok = true
	}
	return d, ok
}

// exposed reports communication not overlapped by computation, per device.
func exposed(p *detectors.Pass, t *model.Trace) {
	devs := exposure(t)
	if len(devs) == 0 {
		p.NotMeasurable("%s: no communication kernels in the capture", t.Path)
		return
	}
	warnPct := p.Param("exposed_warn_pct")
	for _, d := range devs {
		dev, ex, total, exT, sp := d.dev, d.exposed, d.comm, d.exposedLen, d.span
		if sp <= 0 || total <= 0 {
			continue
		}
		share := 100 * float64(exT) / float64(sp)
		if share < 1 {
			continue
		}
		sev := model.SevInfo
		if share >= warnPct {
			sev = model.SevWarning
		}
		overlapPct := 100 * float64(total-exT) / float64(total)
		f := model.Finding{
			Severity: sev,
			Title:    fmt.Sprintf("%sdevice %d: %.1f%% of the span is exposed communication", detectors.RankPrefix(t), dev, share),
			Message: fmt.Sprintf("Communication kernels ran for %s on device %d; %s of it (%.1f%%) overlapped computation and %s was exposed: %.1f%% of the %s GPU span during which the GPU did nothing but communicate.",
				total, dev, total-exT, overlapPct, exT, share, sp),
			Recommendation: "Overlap communication with computation (DDP bucketing, FSDP prefetch, async collectives) or reduce its volume.",
			Metrics: []model.Metric{
				{Name: "comm_ns", Value: float64(total), Unit: "ns"},
				{Name: "exposed_comm_ns", Value: float64(exT), Unit: "ns"},
				{Name: "exposed_pct_of_span", Value: detectors.Round2(share), Unit: "%", Num: float64(exT), Den: float64(sp)},
				{Name: "overlap_pct", Value: detectors.Round2(overlapPct), Unit: "%", Num: float64(total - exT), Den: float64(total)},
			},
		}
		sort.SliceStable(ex, func(i, j int) bool { return ex[i].Len() > ex[j].Len() })
		for i := 0; i < len(ex) && i < 5; i++ {
			f.Evidence = append(f.Evidence, model.Evidence{Rank: t.Rank, Device: dev, Stream: model.NoStream, Thread: -1, Start: ex[i].Start, End: ex[i].End,
				Note: fmt.Sprintf("%s of communication with no computation", ex[i].Len())})
		}
		p.Report(f)
	}
}

type groupKey struct {
	dev   model.DeviceID
	op    model.CollOp
	bytes int64
	group string
	pos   int // position within the step when the size is unknown (-1 otherwise)
}

// waiting reports collectives much slower than the median of their group. It
// returns false when no collective could be compared with like.
func waiting(p *detectors.Pass, t *model.Trace) bool {
	ops := commOps(t)
	factor := p.Param("slow_factor")
	// Like with like: collectives of one (operation, size); when the size is
	// not recorded, the same position within each profiler step (the k-th
	// all-reduce of step 5 is the same tensor as the k-th of step 6).
	groups := map[groupKey][]int{}
	starts, _ := stepRanges(t)
	type posKey struct {
		step int
		dev  model.DeviceID
		op   model.CollOp
		grp  string
	}
	pos := map[posKey]int{}
	unsized := 0
	for i, o := range ops {
		k := groupKey{o.Device, o.Op, o.Bytes, o.Group, -1}
		if o.Bytes < 0 {
			if len(starts) < 5 {
				unsized++
				continue
			}
			st := stepOf(starts, o.Start)
			pk := posKey{st, o.Device, o.Op, o.Group}
			k.pos = pos[pk]
			pos[pk]++
			if st < 0 {
				unsized++
				continue
			}
		}
		groups[k] = append(groups[k], i)
	}
	if unsized > 0 && len(groups) == 0 {
		return false
	}
	type slow struct {
		i     int
		extra model.Duration
	}
	var slows []slow
	var extra, total model.Duration
	for _, idx := range groups {
		if len(idx) < 5 {
			continue
		}
		d := make([]float64, len(idx))
		for j, i := range idx {
			d[j] = float64(ops[i].End - ops[i].Start)
			total += ops[i].End.Sub(ops[i].Start)
		}
		med := median(d)
		for j, i := range idx {
			if med > 0 && d[j] > factor*med {
				e := model.Duration(d[j] - med)
				extra += e
				slows = append(slows, slow{i, e})
			}
		}
	}
	if len(slows) == 0 || total == 0 {
		return true
	}
	sort.Slice(slows, func(a, b int) bool {
		if slows[a].extra != slows[b].extra {
			return slows[a].extra > slows[b].extra
		}
		return ops[slows[a].i].Start < ops[slows[b].i].Start
	})
	f := model.Finding{
		Severity:   model.SevInfo,
		Confidence: model.Inferred,
		Title:      fmt.Sprintf("%s%d collectives took over %.0fx the median of their size: %s spent waiting", detectors.RankPrefix(t), len(slows), factor, extra),
		Message: fmt.Sprintf("%d of the trace's collectives lasted more than %.0f times the median duration of collectives of the same operation and size; the time above the median, %s (%.1f%% of all collective time), was most likely spent waiting for peer ranks or the fabric.",
			len(slows), factor, extra, 100*float64(extra)/float64(total)),
		Recommendation: "Give the traces of all ranks together to find the straggler; check the late rank's host-side gaps and data loading.",
		Metrics: []model.Metric{
			{Name: "slow_collectives", Value: float64(len(slows)), Unit: "count"},
			{Name: "wait_ns", Value: float64(extra), Unit: "ns"},
			{Name: "wait_pct_of_comm", Value: detectors.Round2(100 * float64(extra) / float64(total)), Unit: "%", Num: float64(extra), Den: float64(total)},
		},
	}
	if 100*float64(extra)/float64(total) >= 20 {
		f.Severity = model.SevWarning
	}
	for i := 0; i < len(slows) && i < 5; i++ {
		o := ops[slows[i].i]
		f.Evidence = append(f.Evidence, model.Evidence{Rank: t.Rank, Device: o.Device, Stream: o.Stream, Thread: -1, Start: o.Start, End: o.End,
			Note: fmt.Sprintf("%s %s, %s above the median", o.Op, o.End.Sub(o.Start), slows[i].extra)})
	}
	p.Report(f)
	return true
}

func sortedDevices(m map[model.DeviceID][]model.Interval) []model.DeviceID {
	out := make([]model.DeviceID, 0, len(m))
	for d := range m {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func uniq(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
