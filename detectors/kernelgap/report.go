package kernelgap

import (
	"fmt"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

func run(p *detectors.Pass) error {
	minGap := model.Duration(p.Param("min_gap_us") * float64(model.Microsecond))
	outsideMin := model.Duration(p.Param("outside_min_ms") * float64(model.Millisecond))
	th := thresholds{warn: p.Param("warn_pct"), err: p.Param("error_pct"), top: int(p.Param("top"))}
	for _, t := range p.Set.Traces {
		if len(t.Kernels)+len(t.MemOps) == 0 {
			p.NotMeasurable("%s: no GPU activity in the capture", t.Path)
			continue
		}
		if len(t.APICalls) == 0 {
			p.NotMeasurable("%s: gap causes: no host-side API calls in the capture (GPU-only trace); gaps are measured, causes are not", t.Path)
		}
		var prod detectors.ProducerInfo
		var ctx *contextIndex
		dgs, host := analyze(t, minGap, outsideMin)
		for _, dg := range dgs {
			if len(dg.Gaps) == 0 {
				continue
			}
			if ctx == nil {
				prod = detectors.DetectProducer(t)
				ctx = newContextIndex(t, host.calls)
			}
			p.Report(finding(t, dg, minGap, th, prod, ctx))
		}
	}
	return nil
}

type thresholds struct {
	warn, err float64
	top       int
}

// severityShare returns the idle share that sets the severity and the
// window it was measured in: the profiler steps when the capture marks
// them, else the device span; outside-workload gaps are taken out of both.
func severityShare(t *model.Trace, dg DeviceGaps) (idle, window model.Duration, name string) {
	win := []model.Interval{dg.Span}
	name = "span"
	if steps := detectors.StepWindows(t, dg.Span); len(steps) > 0 {
		win, name = steps, "steps"
	}
	var outside []model.Interval
	for _, g := range dg.Gaps {
		if g.Cause == CauseOutside {
			outside = append(outside, g.Interval)
		}
	}
	if len(outside) > 0 {
		win = detectors.Subtract(win, outside)
		name += " without outside-workload gaps"
	}
	for _, g := range dg.Gaps {
		if g.Cause != CauseOutside {
			idle += detectors.Overlap(win, g.Start, g.End)
		}
	}
	return idle, detectors.Total(win), name
}

func finding(t *model.Trace, dg DeviceGaps, minGap model.Duration, th thresholds, prod detectors.ProducerInfo, ctx *contextIndex) model.Finding {
	span := dg.Span.Len()
	lens := make([]float64, len(dg.Gaps))
	var total model.Duration
	for i, g := range dg.Gaps {
		lens[i] = float64(g.Len())
		total += g.Len()
	}
	sort.Float64s(lens)
	q := func(p float64) float64 { return stat.Quantile(p, stat.Empirical, lens, nil) }
	pct := detectors.Pct(float64(total), float64(span))
	idle, window, winName := severityShare(t, dg)
	sevPct := detectors.Pct(float64(idle), float64(window))
	sev := model.SevInfo
	switch {
	case sevPct >= th.err:
		sev = model.SevError
	case sevPct >= th.warn:
		sev = model.SevWarning
	}
	// Dominant cause among the gaps of the workload.
	dom := CauseUnknown
	var domT model.Duration = -1
	for _, c := range Causes() {
		if c != CauseOutside && dg.Count[c] > 0 && dg.ByCause[c] > domT {
			dom, domT = c, dg.ByCause[c]
		}
	}
	if domT < 0 {
		dom = CauseOutside
	}
	f := model.Finding{
		Severity: sev,
		Title:    fmt.Sprintf("%s%s idle %.1f%% of the span in %d gaps > %s (mostly %s)", detectors.RankPrefix(t), detectors.DeviceLabel(t, dg.Device), pct, len(dg.Gaps), minGap, dom),
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
			{Name: "severity_idle_ns", Value: float64(idle), Unit: "ns"},
			{Name: "severity_window_ns", Value: float64(window), Unit: "ns"},
			{Name: "severity_idle_pct", Value: detectors.Round2(sevPct), Unit: "%", Num: float64(idle), Den: float64(window)},
		},
	}
	var parts []string
	for _, c := range Causes() {
		d := dg.ByCause[c]
		if dg.Count[c] == 0 {
			continue
		}
		share := detectors.Pct(float64(d), float64(span))
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
	f.Message += severitySentence(t, dg, idle, window, winName, sevPct)
	if strings.HasPrefix(winName, "steps") {
		f.Metrics = append(f.Metrics,
			model.Metric{Name: "in_steps_gap_ns", Value: float64(idle), Unit: "ns"},
			model.Metric{Name: "in_steps_span_ns", Value: float64(window), Unit: "ns"},
			model.Metric{Name: "in_steps_gap_pct", Value: detectors.Round2(sevPct), Unit: "%", Num: float64(idle), Den: float64(window)})
	}
	if dg.Count[CauseNotMeasurable] > 0 {
		f.Message += " The capture has no host-side API calls, so gap causes are not measurable."
	}
	f.Recommendation = recommendation(dom, prod)
	f.Confidence = model.Inferred
	if dom == CauseNotMeasurable || dom == CauseUnknown || dom == CauseOutside {
		f.Confidence = model.Measured
	}
	f.Evidence = evidence(t, dg, th.top, ctx)
	return f
}

// severitySentence says which window decided the severity.
func severitySentence(t *model.Trace, dg DeviceGaps, idle, window model.Duration, winName string, sevPct float64) string {
	var s string
	if strings.HasPrefix(winName, "steps") {
		s = fmt.Sprintf(" Inside the %d profiler steps (the steady state) the GPU was idle in these gaps for %s of %s (%.1f%%); the severity follows that share.",
			len(detectors.StepWindows(t, dg.Span)), idle, window, sevPct)
	} else {
		s = fmt.Sprintf(" The capture marks no profiler steps, so the severity follows the idle share of the device span: %s of %s (%.1f%%).", idle, window, sevPct)
	}
	if dg.Count[CauseOutside] > 0 {
		s += fmt.Sprintf(" %d outside-workload gaps (%s: no CUDA call and no range of the program) are left out of that share.",
			dg.Count[CauseOutside], dg.ByCause[CauseOutside])
	}
	return s
}

// evidence lists the largest gaps with their cause and host context.
func evidence(t *model.Trace, dg DeviceGaps, top int, ctx *contextIndex) []model.Evidence {
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
	var out []model.Evidence
	for _, i := range idx {
		g := dg.Gaps[i]
		tid := int64(-1)
		if g.Thread != model.NoThread {
			tid = t.Thread(g.Thread).TID
		}
		note := fmt.Sprintf("%s gap: %s", g.Len(), g.Cause)
		if g.Cause == CauseLaunch && g.Launch >= 0 && g.Detail == "" {
			a := &t.APICalls[g.Launch]
			if a.Start >= g.Start {
				g.Detail = fmt.Sprintf("%s started %s after the GPU went idle", t.Str(t.CallName(a)), a.Start.Sub(g.Start))
			} else {
				g.Detail = fmt.Sprintf("%s started %s before the GPU went idle and returned %s into the gap", t.Str(t.CallName(a)), g.Start.Sub(a.Start), a.End.Sub(g.Start))
			}
		}
		context := ""
		if g.Cause != CauseNotMeasurable && g.Thread != model.NoThread {
			context = ctx.describe(g.Thread, g.Focus)
		}
		if g.Detail != "" {
			note += " (" + g.Detail + ")"
		}
		if context != "" {
			note += "; host in " + context
		}
		out = append(out, model.Evidence{Rank: t.Rank, Device: dg.Device, Stream: model.NoStream, Thread: tid,
			Start: g.Start, End: g.End, Note: note, Cause: g.Cause.String(), Context: context})
	}
	return out
}

// recommendation is the advice for the dominant cause, worded for the
// software that produced the trace.
func recommendation(c Cause, prod detectors.ProducerInfo) string {
	torch := prod.Producer == detectors.ProducerPyTorch
	switch c {
	case CauseLaunch:
		return detectors.LaunchBoundAdvice(prod)
	case CauseHostCompute:
		return "The launching thread was busy with host work that launched nothing (the evidence names the op or range): profile it (py-spy, nsys CPU sampling), move it off the launching thread, or onto the GPU."
	case CauseSync:
		return detectors.SyncAdvice(prod)
	case CauseMemcpy:
		return detectors.CopyAdvice(prod)
	case CauseDependency:
		return "The next kernel was queued in time but waited for another stream, event or graph dependency (the evidence names the wait): shorten the critical path on the other stream, or give the waiting stream independent work."
	case CauseComm:
		return "The host waits in collectives: check for straggler ranks, overlap communication with computation, and check the fabric bandwidth."
	case CauseGIL:
		return "The launching thread waits for the Python GIL: move competing Python threads out of the process or release the GIL in them."
	case CauseDataLoading:
		if torch {
			return "The input pipeline starves the GPU: raise DataLoader num_workers, set pin_memory=True and persistent_workers=True, prefetch (prefetch_factor), and move decoding/augmentation off the main process or onto the GPU."
		}
		return "The input pipeline starves the GPU: load and preprocess the next batch in parallel worker threads or processes, prefetch into pinned memory, and overlap the copy with compute."
	case CauseJIT:
		return "Run-time compilation stalls the GPU: keep it out of measurements (warm up first), cache compiled kernels across runs, and avoid recompilations (changing shapes or dtypes, graph breaks)."
	case CauseLazyInit:
		return "First-call costs (context creation, module loading, library handles, large allocations, autotuning) stall the GPU: do them before the measured region (warm-up), load modules eagerly (CUDA_MODULE_LOADING=EAGER) when the first launches matter, and reuse allocations."
	case CauseUVM:
		return "Unified-memory page migrations stall the GPU: prefetch managed memory to the device (cudaMemPrefetchAsync), set memory advice (cudaMemAdvise), or allocate device memory explicitly."
	case CauseOutside:
		return "Most idle time is outside the traced workload (no CUDA calls, no ranges): narrow the capture to the workload, or add host tracing (NVTX ranges, OS runtime, CPU sampling) to see what the process did."
	case CauseNotMeasurable:
		return "Re-capture with host-side tracing (torch.profiler with CPU activities, or nsys with --trace=cuda,nvtx,osrt) to learn why the GPU is idle."
	}
	return "Look at the largest gaps in the timeline: the capture does not show why the GPU waited."
}
