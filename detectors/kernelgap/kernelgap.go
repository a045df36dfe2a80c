package kernelgap

import (
	"fmt"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Cause is why the GPU sat idle in a gap.
type Cause uint8

// Gap causes, in the order they are tried.
const (
	CauseSync          Cause = iota // the host sat in a synchronize call
	CauseMemcpy                     // the host sat in a blocking memory copy
	CauseComm                       // the host sat in a collective (waiting for peers)
	CauseGIL                        // the launching thread waited for the Python GIL
	CauseLaunch                     // the next launch call came late: host-bound
	CauseUnknown                    // the trace shows no reason
	CauseNotMeasurable              // the trace has no host-side data to tell
	numCauses
)

var causeNames = [...]string{"sync-blocked", "memcpy-blocked", "comm-wait", "gil", "launch-bound", "unknown", "not-measurable"}

func (c Cause) String() string { return causeNames[c] }

// Causes lists every cause in report order.
func Causes() []Cause {
	out := make([]Cause, numCauses)
	for i := range out {
		out[i] = Cause(i)
	}
	return out
}

// Detector is the kernel-gap rule.
var Detector = &detectors.Detector{
	ID:       "kernel-gap",
	Title:    "GPU idle gaps between kernels",
	Layer:    model.LayerScheduling,
	Severity: model.SevWarning,
	Needs:    []model.Capability{model.CapKernels, model.CapMemOps},
	Formats:  detectors.TimelineFormats,
	Params: []detectors.Param{
		{Name: "min_gap_us", Default: 50, Unit: "µs", Doc: "gaps shorter than this are not counted"},
		{Name: "warn_pct", Default: 10, Unit: "%", Doc: "idle share of the span (in counted gaps) at or above which the finding is a warning"},
		{Name: "error_pct", Default: 40, Unit: "%", Doc: "idle share of the span at or above which the finding is an error"},
		{Name: "top", Default: 10, Unit: "count", Doc: "how many of the largest gaps are listed as evidence"},
	},
	Doc: `Finds the GPU idle gaps on each device: stretches longer than min_gap_us in
which no kernel, memcpy or memset ran on any stream of the device (the union of
GPU activity). It reports the distribution of the gaps (count, total, p50, p90,
p99, max), the largest gaps as evidence, and attributes each gap to a cause from
what the host was doing inside it:

- sync-blocked: the launching thread was in a synchronize call (cudaDeviceSynchronize,
  cudaStreamSynchronize, cudaEventSynchronize, hip*Synchronize) that overlaps the gap or
  returned inside it, so nothing was queued while the GPU drained;
- memcpy-blocked: the launching thread was in a blocking memory copy (cudaMemcpy without
  Async, or any copy call) overlapping the gap;
- comm-wait: a host thread of the process was inside a collective (c10d::*, nccl:*,
  gloo:*, record_param_comms) covering most of the gap: it waited for peers;
- gil: the launching thread waited for the Python GIL during the gap (only when the
  capture has GIL intervals);
- launch-bound: the launch call of the next GPU activity started inside the gap: the
  host was late to submit work (Python overhead, data loading, CPU-side logic);
- unknown: none of the above (for example the next kernel was queued before the gap
  and waited on another stream or device);
- not-measurable: the trace has no host-side API calls (a GPU-only capture), so causes
  cannot be told; the gaps themselves are still measured.

The "launching thread" is the thread whose API call launched the activity right
after the gap (linked by correlation id), or, when that link is missing, the
thread that launched most work on the device.

Totals per cause are given as time and as a share of the device's span (first
GPU activity to last). Severity follows the idle share held by counted gaps
(warn_pct, error_pct): of the time inside profiler steps when the capture marks
steps (ProfilerStep#N: the steady state, without start-up and warm-up), else of
the whole span.

## How to fix
- launch-bound: the host cannot keep the GPU fed. Capture the step with CUDA Graphs
  (torch.cuda.graphs, torch.compile(mode="reduce-overhead")), fuse small kernels
  (torch.compile), move data loading off the main thread (DataLoader num_workers,
  pin_memory), and remove Python work from the hot loop.
- sync-blocked: remove synchronize calls and host reads of device values (.item(),
  .cpu(), printing tensors, torch.cuda.synchronize()) from the steady state; use
  events and non_blocking copies.
- memcpy-blocked: use pinned host memory and cudaMemcpyAsync / non_blocking=True, and
  overlap copies with compute on a side stream.
- comm-wait: look for stragglers (comm-wait across ranks), overlap communication with
  computation (DDP bucketing, FSDP prefetch), and check the fabric (nccl-bandwidth).
- gil: see gil-stall; move work out of Python threads or release the GIL.
`,
	Run: run,
}

// Gap is one attributed gap.
type Gap struct {
	model.Interval
	Cause  Cause
	Thread model.ThreadID // the launching thread used to attribute it
	Detail string
	// Launch is the APICalls index of the next activity's launch (-1 = unknown).
	Launch int32
}

// DeviceGaps is the result for one device of one trace.
type DeviceGaps struct {
	Device  model.DeviceID
	Span    model.Interval
	Gaps    []Gap
	ByCause [numCauses]model.Duration
	Count   [numCauses]int
}

// Analyze finds and attributes the gaps longer than minGap on every device of t.
func Analyze(t *model.Trace, minGap model.Duration) []DeviceGaps {
	ctx := newHostIndex(t)
	ids, byDev := detectors.ByDevice(detectors.Activities(t))
	var out []DeviceGaps
	for _, id := range ids {
		acts := byDev[id]
		dg := DeviceGaps{Device: id, Span: model.Interval{Start: acts[0].Start, End: acts[0].End}}
		mainThread := ctx.mainLauncher(id)
		// Sweep: track the furthest end so far; a gap opens when the next
		// activity starts after it.
		end := acts[0].End
		for i := 1; i < len(acts); i++ {
			a := acts[i]
			if a.Start > end && model.Duration(a.Start-end) > minGap {
				g := Gap{Interval: model.Interval{Start: end, End: a.Start}, Launch: -1}
				ctx.attribute(&g, a.CorrScope, a.Correlation, mainThread)
				dg.Gaps = append(dg.Gaps, g)
				dg.ByCause[g.Cause] += g.Len()
				dg.Count[g.Cause]++
			}
			if a.End > end {
				end = a.End
			}
		}
		dg.Span.End = end
		out = append(out, dg)
	}
	return out
}

// hostIndex answers "what was the host doing during this window".
type hostIndex struct {
	t          *model.Trace
	hasHost    bool
	launchOf   *detectors.CorrIndex // (scope, correlation) → APICalls index
	perThread  map[model.ThreadID][]int32
	syncs      map[model.ThreadID][]int32 // API calls that block: sync and blocking memcpy
	commRanges []model.Interval           // host-side collective spans (any thread)
	gil        map[model.ThreadID][]model.Interval
	devLaunch  map[model.DeviceID]model.ThreadID
}

func newHostIndex(t *model.Trace) *hostIndex {
	h := &hostIndex{t: t, hasHost: len(t.APICalls) > 0,
		perThread: map[model.ThreadID][]int32{}, syncs: map[model.ThreadID][]int32{}, gil: map[model.ThreadID][]model.Interval{},
		devLaunch: map[model.DeviceID]model.ThreadID{}}
	h.launchOf = detectors.IndexAPI(t, func(a *model.APICall) bool { return submitsWork(a.Class) })
	for i := range t.APICalls {
		a := &t.APICalls[i]
		switch a.Class {
		case model.APISync, model.APIMemcpy, model.APIMemset:
			h.syncs[a.Thread] = append(h.syncs[a.Thread], int32(i))
		}
	}
	var comm []model.Interval
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Kind == model.RangeGPUAnnotation {
			continue
		}
		if model.IsCommRangeName(t.Str(r.Name)) {
			comm = append(comm, model.Interval{Start: r.Start, End: r.End})
		}
	}
	for i := range t.Collectives {
		c := &t.Collectives[i]
		if c.Source == model.CollFromCPU {
			comm = append(comm, model.Interval{Start: c.Start, End: c.End})
		}
	}
	h.commRanges = detectors.Union(comm)
	for i := range t.GIL {
		g := &t.GIL[i]
		if g.State == model.GILWaiting {
			h.gil[g.Thread] = append(h.gil[g.Thread], model.Interval{Start: g.Start, End: g.End})
		}
	}
	for th, ivs := range h.gil {
		h.gil[th] = detectors.Union(ivs)
	}
	// The main launcher of each device: the thread with the most linked
	// launches, counted over an even sample of at most 20k kernels.
	counts := map[model.DeviceID]map[model.ThreadID]int{}
	stride := max(1, len(t.Kernels)/20000)
	for i := 0; i < len(t.Kernels); i += stride {
		k := &t.Kernels[i]
		if ai := h.launchOf.Lookup(detectors.CorrKey{Scope: k.CorrScope, Corr: k.Correlation}); ai >= 0 {
			m := counts[k.Device]
			if m == nil {
				m = map[model.ThreadID]int{}
				counts[k.Device] = m
			}
			m[t.APICalls[ai].Thread]++
		}
	}
	for dev, m := range counts {
		best, bestN := model.NoThread, -1
		for th, n := range m {
			if n > bestN || (n == bestN && th < best) {
				best, bestN = th, n
			}
		}
		h.devLaunch[dev] = best
	}
	return h
}

// submitsWork reports whether an API call of class c can put work on a GPU
// (and so be the launch of an activity after a gap). Other calls with
// correlation ids (event queries, stream waits) never match an activity.
func submitsWork(c model.APIClass) bool {
	switch c {
	case model.APILaunch, model.APIGraphLaunch, model.APIMemcpy, model.APIMemset, model.APIOther:
		return true
	}
	return false
}

func (h *hostIndex) mainLauncher(dev model.DeviceID) model.ThreadID {
	if th, ok := h.devLaunch[dev]; ok {
		return th
	}
	return model.NoThread
}

// attribute sets g's cause from the host activity during it. scope/corr link
// the activity right after the gap to its launch call.
func (h *hostIndex) attribute(g *Gap, scope int32, corr int64, mainThread model.ThreadID) {
	if !h.hasHost {
		g.Cause = CauseNotMeasurable
		return
	}
	t := h.t
	launch := int32(-1)
	if corr != 0 {
		if ai := h.launchOf.Lookup(detectors.CorrKey{Scope: scope, Corr: corr}); ai >= 0 {
			launch = ai
		}
	}
	th := mainThread
	if launch >= 0 {
		th = t.APICalls[launch].Thread
	}
	g.Thread = th
	half := g.Len() / 2
	// sync-blocked / memcpy-blocked: a blocking call on the launching thread
	// overlapping the gap, or returning inside it.
	if th != model.NoThread {
		if ai, ok := h.blockingCall(th, g.Interval); ok {
			a := &t.APICalls[ai]
			name := t.Str(a.Name)
			if a.Class == model.APISync {
				g.Cause = CauseSync
			} else {
				g.Cause = CauseMemcpy
			}
			g.Detail = name
			return
		}
	}
	if detectors.Overlap(h.commRanges, g.Start, g.End) >= half && half > 0 {
		g.Cause = CauseComm
		g.Detail = "host inside a collective"
		return
	}
	if th != model.NoThread {
		if ivs := h.gil[th]; len(ivs) > 0 && detectors.Overlap(ivs, g.Start, g.End) >= half {
			g.Cause = CauseGIL
			g.Detail = "launching thread waited for the GIL"
			return
		}
	}
	if launch >= 0 {
		if t.APICalls[launch].Start > g.Start {
			g.Cause = CauseLaunch
			g.Launch = launch // the detail is written only for gaps shown as evidence
			return
		}
		g.Cause = CauseUnknown
		g.Detail = "next activity was submitted before the gap"
		return
	}
	// No link for the next activity: if the main launching thread issued no
	// launch call before the gap ended, the host was late.
	g.Cause = CauseUnknown
}

// blockingCall finds a sync or memcpy call on th that overlaps iv or returns
// inside it (the host was blocked while the queue drained).
func (h *hostIndex) blockingCall(th model.ThreadID, iv model.Interval) (int32, bool) {
	list := h.syncs[th]
	if len(list) == 0 {
		return 0, false
	}
	t := h.t
	// Calls are in start order; find the first call that starts at or after iv.End.
	j := sort.Search(len(list), func(i int) bool { return t.APICalls[list[i]].Start >= iv.End })
	best := int32(-1)
	var bestCover model.Duration = -1
	// Look back over a bounded number of earlier calls.
	for k := j - 1; k >= 0 && k >= j-64; k-- {
		a := &t.APICalls[list[k]]
		if a.End < iv.Start-model.Time(model.Microsecond*20) {
			continue
		}
		cover := model.Interval{Start: max(a.Start, iv.Start), End: min(a.End, iv.End)}.Len()
		returnsInside := a.End >= iv.Start-model.Time(model.Microsecond*20) && a.End <= iv.End
		if cover == 0 && !returnsInside {
			continue
		}
		if a.Class == model.APIMemcpy || a.Class == model.APIMemset {
			// Async copies do not block the host.
			if !model.IsSyncMemcpyAPI(t.Str(a.Name)) && cover < iv.Len()/2 {
				continue
			}
		}
		if cover > bestCover {
			best, bestCover = list[k], cover
		}
	}
	return best, best >= 0
}

func run(p *detectors.Pass) error {
	minGap := model.Duration(p.Param("min_gap_us") * float64(model.Microsecond))
	warnPct, errPct := p.Param("warn_pct"), p.Param("error_pct")
	top := int(p.Param("top"))
	for _, t := range p.Set.Traces {
		if len(t.Kernels)+len(t.MemOps) == 0 {
			p.NotMeasurable("%s: no GPU activity in the capture", t.Path)
			continue
		}
		if len(t.APICalls) == 0 {
			p.NotMeasurable("%s: gap causes: no host-side API calls in the capture (GPU-only trace); gaps are measured, causes are not", t.Path)
		}
		for _, dg := range Analyze(t, minGap) {
			if len(dg.Gaps) == 0 {
				continue
			}
			p.Report(finding(t, dg, minGap, warnPct, errPct, top))
		}
	}
	return nil
}

func finding(t *model.Trace, dg DeviceGaps, minGap model.Duration, warnPct, errPct float64, top int) model.Finding {
	span := dg.Span.Len()
	lens := make([]float64, len(dg.Gaps))
	var total model.Duration
	for i, g := range dg.Gaps {
		lens[i] = float64(g.Len())
		total += g.Len()
	}
	sort.Float64s(lens)
	q := func(p float64) float64 { return stat.Quantile(p, stat.Empirical, lens, nil) }
	pct := 0.0
	if span > 0 {
		pct = 100 * float64(total) / float64(span)
	}
	// Steady state: when the capture marks steps, the share of idle time
	// inside them decides the severity, so that start-up and warm-up gaps do
	// not dominate a CI gate.
	steps := detectors.StepWindows(t, dg.Span)
	sevPct := pct
	var inGaps, stepSpan model.Duration
	if len(steps) > 0 {
		stepSpan = detectors.Total(steps)
		for _, g := range dg.Gaps {
			inGaps += detectors.Overlap(steps, g.Start, g.End)
		}
		sevPct = 0
		if stepSpan > 0 {
			sevPct = 100 * float64(inGaps) / float64(stepSpan)
		}
	}
	sev := model.SevInfo
	switch {
	case sevPct >= errPct:
		sev = model.SevError
	case sevPct >= warnPct:
		sev = model.SevWarning
	}
	// Dominant cause.
	dom := CauseUnknown
	var domT model.Duration = -1
	for _, c := range Causes() {
		if dg.ByCause[c] > domT {
			dom, domT = c, dg.ByCause[c]
		}
	}
	devName := fmt.Sprintf("device %d", dg.Device)
	if d, ok := t.Device(dg.Device); ok && d.Name != "" {
		devName = fmt.Sprintf("device %d (%s)", dg.Device, d.Name)
	}
	rankStr := ""
	if t.Rank >= 0 {
		rankStr = fmt.Sprintf("rank %d ", t.Rank)
	}
	f := model.Finding{
		Severity: sev,
		Title:    fmt.Sprintf("%s%s idle %.1f%% of the span in %d gaps > %s (mostly %s)", rankStr, devName, pct, len(dg.Gaps), minGap, dom),
		Metrics: []model.Metric{
			{Name: "gap_count", Value: float64(len(dg.Gaps)), Unit: "count"},
			{Name: "gap_total_ns", Value: float64(total), Unit: "ns"},
			{Name: "span_ns", Value: float64(span), Unit: "ns"},
			{Name: "gap_pct_of_span", Value: detectors.Round2(pct), Unit: "%", Num: float64(total), Den: float64(span)},
			{Name: "gap_p50_ns", Value: q(0.5), Unit: "ns"},
			{Name: "gap_p90_ns", Value: q(0.9), Unit: "ns"},
			{Name: "gap_p99_ns", Value: q(0.99), Unit: "ns"},
			{Name: "gap_max_ns", Value: lens[len(lens)-1], Unit: "ns"},
			{Name: "min_gap_ns", Value: float64(minGap), Unit: "ns"},
		},
	}
	var parts []string
	for _, c := range Causes() {
		d := dg.ByCause[c]
		if dg.Count[c] == 0 {
			continue
		}
		share := 0.0
		if span > 0 {
			share = 100 * float64(d) / float64(span)
		}
		f.Metrics = append(f.Metrics,
			model.Metric{Name: c.String() + "_ns", Value: float64(d), Unit: "ns"},
			model.Metric{Name: c.String() + "_count", Value: float64(dg.Count[c]), Unit: "count"},
			model.Metric{Name: c.String() + "_pct_of_span", Value: detectors.Round2(share), Unit: "%", Num: float64(d), Den: float64(span)})
		parts = append(parts, fmt.Sprintf("%s %s (%.1f%%, %d gaps)", c, d, share, dg.Count[c]))
	}
	what := "GPU"
	if d, ok := t.Device(dg.Device); ok && d.Kind == model.DeviceAccel {
		what = "accelerator"
	}
	f.Message = fmt.Sprintf("The %s sat idle for %s of its %s span (%.1f%%) in %d gaps longer than %s; median gap %s, p90 %s, p99 %s, max %s. By cause: %s.",
		what, total, span, pct, len(dg.Gaps), minGap, model.Duration(q(0.5)), model.Duration(q(0.9)), model.Duration(q(0.99)), model.Duration(lens[len(lens)-1]),
		strings.Join(parts, "; "))
	if len(steps) > 0 {
		f.Metrics = append(f.Metrics,
			model.Metric{Name: "in_steps_gap_ns", Value: float64(inGaps), Unit: "ns"},
			model.Metric{Name: "in_steps_span_ns", Value: float64(stepSpan), Unit: "ns"},
			model.Metric{Name: "in_steps_gap_pct", Value: detectors.Round2(sevPct), Unit: "%", Num: float64(inGaps), Den: float64(stepSpan)})
		f.Message += fmt.Sprintf(" Inside the %d profiler steps (the steady state) the GPU was idle in these gaps for %s of %s (%.1f%%); the severity follows that share.",
			len(steps), inGaps, stepSpan, sevPct)
	}
	if dg.Count[CauseNotMeasurable] > 0 {
		f.Message += " The capture has no host-side API calls, so gap causes are not measurable."
	}
	f.Recommendation = recommendation(dom)
	if dom == CauseNotMeasurable || dom == CauseUnknown {
		f.Confidence = model.Measured
	} else {
		f.Confidence = model.Inferred
	}
	// Evidence: the largest gaps.
	idx := make([]int, len(dg.Gaps))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ga, gb := dg.Gaps[idx[a]], dg.Gaps[idx[b]]
		if ga.Len() != gb.Len() {
			return ga.Len() > gb.Len()
		}
		return ga.Start < gb.Start
	})
	if len(idx) > top {
		idx = idx[:top]
	}
	for _, i := range idx {
		g := dg.Gaps[i]
		tid := int64(-1)
		if g.Thread != model.NoThread {
			tid = t.Thread(g.Thread).TID
		}
		note := fmt.Sprintf("%s gap: %s", g.Len(), g.Cause)
		if g.Cause == CauseLaunch && g.Launch >= 0 {
			a := &t.APICalls[g.Launch]
			g.Detail = fmt.Sprintf("%s started %s after the GPU went idle", t.Str(a.Name), a.Start.Sub(g.Start))
		}
		if g.Detail != "" {
			note += " (" + g.Detail + ")"
		}
		f.Evidence = append(f.Evidence, model.Evidence{Rank: t.Rank, Device: dg.Device, Stream: model.NoStream, Thread: tid,
			Start: g.Start, End: g.End, Note: note})
	}
	return f
}

func recommendation(c Cause) string {
	switch c {
	case CauseLaunch:
		return "The host is late to submit work: capture the step with CUDA Graphs or torch.compile(mode=\"reduce-overhead\"), fuse small kernels, and move data loading and Python logic off the launching thread."
	case CauseSync:
		return "Remove synchronize calls and host reads of device values (.item(), .cpu(), torch.cuda.synchronize()) from the steady state; use events and non_blocking copies."
	case CauseMemcpy:
		return "Use pinned host memory with non_blocking=True (cudaMemcpyAsync) and overlap copies with compute on a side stream."
	case CauseComm:
		return "The host waits in collectives: check for straggler ranks, overlap communication with computation, and check the fabric bandwidth."
	case CauseGIL:
		return "The launching thread waits for the Python GIL: move competing Python threads out of the process or release the GIL in them."
	case CauseNotMeasurable:
		return "Re-capture with host-side tracing (torch.profiler with CPU activities, or nsys with --trace=cuda,nvtx,osrt) to learn why the GPU is idle."
	}
	return "Look at the largest gaps in the timeline: the next work was submitted in time but did not start (cross-stream or cross-device dependencies)."
}
