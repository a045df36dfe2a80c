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
	"math"
	"sort"
	"strings"

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
   fabric). Their extra time is summed.
3. Stragglers, across the ranks of a job (several trace files given together):
   collectives are matched across ranks by process group, operation and order
   (sequence numbers when the trace has them). Because a collective ends at about
   the same moment on every rank, the ranks' clocks are aligned on the median
   difference of matched end times; each rank's arrival lateness is then its
   aligned start minus the earliest rank's. The rank that arrives last most
   often, by the largest mean margin, is named the straggler, with the time the
   other ranks spent waiting for it.

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
		waiting(p, t)
	}
	if len(p.Set.Traces) > 1 {
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
		out = append(out, commOp{Start: k.Start, End: k.End, Device: k.Device, Stream: k.Stream, Op: model.CollOpFromName(t.Str(k.Name)), Bytes: -1, Seq: -1})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

func rankPrefix(t *model.Trace) string {
	if t.Rank >= 0 {
		return fmt.Sprintf("rank %d ", t.Rank)
	}
	return ""
}

// exposed reports communication not overlapped by computation, per device.
func exposed(p *detectors.Pass, t *model.Trace) {
	ops := commOps(t)
	if len(ops) == 0 {
		p.NotMeasurable("%s: no communication kernels in the capture", t.Path)
		return
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
	warnPct := p.Param("exposed_warn_pct")
	for _, dev := range sortedDevices(comm) {
		cu := detectors.Union(comm[dev])
		ex := detectors.Subtract(cu, detectors.Union(comp[dev]))
		total, exT := detectors.Total(cu), detectors.Total(ex)
		sp := span[dev].Len()
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
			Title:    fmt.Sprintf("%sdevice %d: %.1f%% of the span is exposed communication", rankPrefix(t), dev, share),
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
}

// waiting reports collectives much slower than the median of their group.
func waiting(p *detectors.Pass, t *model.Trace) {
	ops := commOps(t)
	factor := p.Param("slow_factor")
	groups := map[groupKey][]int{}
	for i, o := range ops {
		groups[groupKey{o.Device, o.Op, o.Bytes, o.Group}] = append(groups[groupKey{o.Device, o.Op, o.Bytes, o.Group}], i)
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
		return
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
		Title:      fmt.Sprintf("%s%d collectives took over %.0fx the median of their size: %s spent waiting", rankPrefix(t), len(slows), factor, extra),
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
}

// seqKey identifies a sequence of collectives that every rank runs in the same order.
type seqKey struct {
	group string
	op    model.CollOp
}

// stragglers matches collectives across ranks and names the straggler.
func stragglers(p *detectors.Pass) {
	traces := p.Set.Traces
	perRank := make([]map[seqKey][]commOp, len(traces))
	for r, t := range traces {
		perRank[r] = map[seqKey][]commOp{}
		for _, o := range commOps(t) {
			k := seqKey{o.Group, o.Op}
			perRank[r][k] = append(perRank[r][k], o)
		}
		for k, list := range perRank[r] {
			if hasSeq(list) {
				sort.SliceStable(list, func(i, j int) bool { return list[i].Seq < list[j].Seq })
				perRank[r][k] = list
			}
		}
	}
	// Match the i-th collective of each sequence across all ranks that run it.
	type match struct {
		ops []commOp // one per rank (index = position in traces)
	}
	var matches []match
	var mismatched []string
	keys := map[seqKey]bool{}
	for _, m := range perRank {
		for k := range m {
			keys[k] = true
		}
	}
	sortedKeys := make([]seqKey, 0, len(keys))
	for k := range keys {
		sortedKeys = append(sortedKeys, k)
	}
	sort.Slice(sortedKeys, func(i, j int) bool {
		if sortedKeys[i].group != sortedKeys[j].group {
			return sortedKeys[i].group < sortedKeys[j].group
		}
		return sortedKeys[i].op < sortedKeys[j].op
	})
	for _, k := range sortedKeys {
		n := -1
		for r := range traces {
			c := len(perRank[r][k])
			if c == 0 {
				n = 0
				break
			}
			if n < 0 || c < n {
				n = c
			}
			if c != len(perRank[0][k]) {
				mismatched = append(mismatched, fmt.Sprintf("%s on group %q: %d vs %d", k.op, k.group, len(perRank[0][k]), c))
			}
		}
		for i := 0; i < n; i++ {
			m := match{ops: make([]commOp, len(traces))}
			for r := range traces {
				m.ops[r] = perRank[r][k][i]
			}
			matches = append(matches, m)
		}
	}
	if len(matches) < int(p.Param("min_matched")) {
		p.NotMeasurable("stragglers: only %d collectives could be matched across the %d ranks (need %.0f)", len(matches), len(traces), p.Param("min_matched"))
		return
	}
	// Clock offsets: median difference of matched end times against the first rank.
	offsets := make([]model.Duration, len(traces))
	for r := 1; r < len(traces); r++ {
		d := make([]float64, len(matches))
		for i, m := range matches {
			d[i] = float64(m.ops[r].End - m.ops[0].End)
		}
		offsets[r] = model.Duration(median(d))
	}
	late := make([]model.Duration, len(traces))       // summed lateness
	lastCount := make([]int, len(traces))             // times the rank arrived last
	waitCaused := make([]model.Duration, len(traces)) // waiting of others when the rank was last
	type worst struct {
		m      int
		margin model.Duration
	}
	var worstOf []worst
	for mi, m := range matches {
		arr := make([]model.Time, len(traces))
		first, last := model.Time(math.MaxInt64), model.Time(math.MinInt64)
		lastRank := 0
		for r := range traces {
			arr[r] = m.ops[r].Start - model.Time(offsets[r])
			first = min(first, arr[r])
			if arr[r] > last {
				last, lastRank = arr[r], r
			}
		}
		for r := range traces {
			late[r] += model.Duration(arr[r] - first)
		}
		lastCount[lastRank]++
		for r := range traces {
			waitCaused[lastRank] += model.Duration(last - arr[r])
		}
		worstOf = append(worstOf, worst{mi, model.Duration(last - first)})
	}
	strag := 0
	for r := range traces {
		if late[r] > late[strag] || (late[r] == late[strag] && lastCount[r] > lastCount[strag]) {
			strag = r
		}
	}
	n := len(matches)
	meanLate := model.Duration(int64(late[strag]) / int64(n))
	var others model.Duration
	for r := range traces {
		if r != strag {
			others += late[r]
		}
	}
	meanOthers := model.Duration(0)
	if len(traces) > 1 {
		meanOthers = model.Duration(int64(others) / int64(n*(len(traces)-1)))
	}
	if meanLate < model.Duration(p.Param("skew_info_us")*float64(model.Microsecond)) {
		return // ranks arrive together: nothing to report
	}
	sev := model.SevInfo
	if meanLate >= model.Duration(p.Param("skew_warn_us")*float64(model.Microsecond)) {
		sev = model.SevWarning
	}
	st := traces[strag]
	rankName := func(r int) string {
		if traces[r].Rank >= 0 {
			return fmt.Sprintf("rank %d", traces[r].Rank)
		}
		return traces[r].Path
	}
	var lines []string
	for r := range traces {
		lines = append(lines, fmt.Sprintf("%s mean lateness %s, last %d/%d", rankName(r), model.Duration(int64(late[r])/int64(n)), lastCount[r], n))
	}
	f := model.Finding{
		Severity:   sev,
		Confidence: model.Inferred,
		Title:      fmt.Sprintf("Straggler: %s arrives %s late on average at %d matched collectives", rankName(strag), meanLate, n),
		Message: fmt.Sprintf("Across %d ranks, %d collectives were matched by process group, operation and order and the clocks aligned on their end times. %s arrived last at %d of %d collectives, on average %s after the earliest rank (other ranks: %s); the other ranks spent %s in total waiting for it. Per rank: %s.",
			len(traces), n, rankName(strag), lastCount[strag], n, meanLate, meanOthers, waitCaused[strag], strings.Join(lines, "; ")),
		Recommendation: fmt.Sprintf("Look at %s's own timeline (kernel-gap, gil-stall findings): host-side work, data loading or a slower GPU make it late; balance work across ranks.", rankName(strag)),
		Metrics: []model.Metric{
			{Name: "straggler_rank", Value: float64(st.Rank), Unit: "rank"},
			{Name: "matched_collectives", Value: float64(n), Unit: "count"},
			{Name: "straggler_mean_lateness_ns", Value: float64(meanLate), Unit: "ns"},
			{Name: "others_mean_lateness_ns", Value: float64(meanOthers), Unit: "ns"},
			{Name: "straggler_last_count", Value: float64(lastCount[strag]), Unit: "count", Num: float64(lastCount[strag]), Den: float64(n)},
			{Name: "wait_caused_ns", Value: float64(waitCaused[strag]), Unit: "ns"},
		},
	}
	if len(mismatched) > 0 {
		sort.Strings(mismatched)
		f.Message += fmt.Sprintf(" Collective counts differ between ranks (%s); only the common prefix was compared.", strings.Join(uniq(mismatched), "; "))
	}
	sort.SliceStable(worstOf, func(i, j int) bool { return worstOf[i].margin > worstOf[j].margin })
	for i := 0; i < len(worstOf) && i < 5; i++ {
		o := matches[worstOf[i].m].ops[strag]
		f.Evidence = append(f.Evidence, model.Evidence{Rank: st.Rank, Device: o.Device, Stream: o.Stream, Thread: -1, Start: o.Start, End: o.End,
			Note: fmt.Sprintf("%s: arrival spread across ranks %s", o.Op, worstOf[i].margin)})
	}
	for r := range traces {
		f.Metrics = append(f.Metrics, model.Metric{Name: fmt.Sprintf("rank%d_mean_lateness_ns", traces[r].Rank), Value: float64(int64(late[r]) / int64(n)), Unit: "ns"},
			model.Metric{Name: fmt.Sprintf("rank%d_clock_offset_ns", traces[r].Rank), Value: float64(offsets[r]), Unit: "ns"})
	}
	p.Report(f)
}

func hasSeq(list []commOp) bool {
	for _, o := range list {
		if o.Seq < 0 {
			return false
		}
	}
	return len(list) > 0
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
