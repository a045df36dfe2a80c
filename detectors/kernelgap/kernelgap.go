package kernelgap

import (
	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

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
		{Name: "warn_pct", Default: 10, Unit: "%", Doc: "idle share of the workload (in counted gaps) at or above which the finding is a warning"},
		{Name: "error_pct", Default: 40, Unit: "%", Doc: "idle share of the workload at or above which the finding is an error"},
		{Name: "top", Default: 10, Unit: "count", Doc: "how many of the largest gaps are listed as evidence"},
		{Name: "outside_min_ms", Default: 1000, Unit: "ms", Doc: "a stretch at least this long with no CUDA call and no range of the program is outside-workload"},
	},
	Doc: ruleDoc(),
	Run: run,
}

func ruleDoc() string {
	return `Finds the GPU idle gaps on each device: stretches longer than min_gap_us in
which no kernel, memcpy or memset ran on any stream of the device (the union of
GPU activity; unified-memory migrations are not counted as activity). It reports
the distribution of the gaps (count, total, p50, p90, p99, max), the largest gaps
as evidence, and attributes each gap to a cause from what the host was doing
inside it. Each evidence item carries the cause word and the host context: the
innermost op, range or API call covering the gap on the launching thread, after
the outermost user annotation ("ProfilerStep#3 > aten::item").

The "launching thread" is the thread whose API call launched the activity right
after the gap (linked by correlation id), or, when that link is missing, the
thread that launched most work on the device.

` + causesDoc() + `
Totals per cause are given as time, count and share of the device's span
(metrics <cause>_ns, <cause>_count, <cause>_pct_of_span). Severity follows the
idle share held by counted gaps (warn_pct, error_pct) in the window that stands
for the workload: the profiler steps when the capture marks them
(ProfilerStep#N: the steady state, without start-up and warm-up), else the
device's span; the message says which. outside-workload gaps are reported but
excluded from both the idle time and the window (metrics severity_idle_ns,
severity_window_ns, severity_idle_pct).

## How to fix
- launch-bound: the host cannot keep the GPU fed: capture the step as a CUDA Graph,
  fuse small kernels, batch more work per launch (see launch-overhead).
- host-compute: profile the host side of the named op or range (py-spy, nsys
  sampling); move the work off the launching thread or onto the GPU.
- sync-blocked: remove synchronize calls and host reads of device values from the
  steady state; use events and asynchronous copies.
- memcpy-blocked: use pinned host memory and asynchronous copies, and overlap
  copies with compute on a side stream.
- dependency-wait: look at the stream or event the next kernel waited for (the
  evidence names the wait); overlap independent work across streams.
- comm-wait: look for stragglers (comm-wait across ranks), overlap communication
  with computation, and check the fabric (nccl-bandwidth).
- data-loading: more loader workers, prefetching, pinned memory, faster decoding.
- jit-compile / lazy-init: one-off costs: exclude warm-up from measurements, cache
  compiled kernels, avoid recompilation (shape changes), eager module loading.
- uvm-migration: prefetch managed memory (cudaMemPrefetchAsync) or use explicit
  device allocations (see memcpy).
- outside-workload: the capture cannot see what the process did: narrow the capture
  to the workload or add host tracing (NVTX ranges, OS-runtime, sampling).
`
}

// Gap is one attributed gap.
type Gap struct {
	model.Interval
	Cause  Cause
	Thread model.ThreadID // the launching thread used to attribute it
	Detail string
	// Launch is the APICalls index of the next activity's launch (-1 = unknown).
	Launch int32
	// Focus is the stretch whose host context describes the gap: the gap,
	// the blocking call, or the longest stretch without CUDA calls.
	Focus model.Interval
}

// DeviceGaps is the result for one device of one trace.
type DeviceGaps struct {
	Device  model.DeviceID
	Span    model.Interval
	Gaps    []Gap
	ByCause [numCauses]model.Duration
	Count   [numCauses]int
}

// Analyze finds and attributes the gaps longer than minGap on every device
// of t; stretches of at least outsideMin without CUDA calls or ranges are
// outside-workload.
func Analyze(t *model.Trace, minGap, outsideMin model.Duration) []DeviceGaps {
	out, _ := analyze(t, minGap, outsideMin)
	return out
}

// analyze is Analyze, also returning the host index it attributed with.
func analyze(t *model.Trace, minGap, outsideMin model.Duration) ([]DeviceGaps, *hostIndex) {
	ctx := newHostIndex(t, outsideMin)
	ids, byDev := detectors.DeviceActivities(t)
	hasUVM := len(ctx.uvm) > 0 // the host index holds the migrations per device
	var out []DeviceGaps
	for _, id := range ids {
		acts := byDev[id]
		if hasUVM {
			if acts = withoutUVM(t, acts); acts.Len() == 0 {
				continue
			}
		}
		a0 := acts.At(0)
		dg := DeviceGaps{Device: id, Span: model.Interval{Start: a0.Start, End: a0.End}}
		mainThread := ctx.mainLauncher(id)
		// Sweep: track the furthest end so far; a gap opens when the next
		// activity starts after it.
		end := a0.End
		for i := 1; i < acts.Len(); i++ {
			a := acts.At(i)
			if a.Start > end && model.Duration(a.Start-end) > minGap {
				g := Gap{Interval: model.Interval{Start: end, End: a.Start}, Launch: -1}
				ctx.attribute(&g, id, a, mainThread)
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
	return out, ctx
}

// withoutUVM returns a copy of acts without unified-memory migrations: they
// are not work the device chose to run, and gaps under them are
// uvm-migration.
func withoutUVM(t *model.Trace, acts detectors.ActList) detectors.ActList {
	return acts.Filter(func(a *detectors.Activity) bool { return a.IsKernel || t.MemOps[a.Index].Kind != model.MemUVM })
}
