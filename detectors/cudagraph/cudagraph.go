package cudagraph

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Detector is the cuda-graph rule.
var Detector = &detectors.Detector{
	ID:       "cuda-graph",
	Title:    "CUDA graphs",
	Layer:    model.LayerKernel,
	Severity: model.SevWarning,
	Formats:  detectors.TimelineFormats,
	Needs:    []model.Capability{model.CapKernels},
	Params: []detectors.Param{
		{Name: "min_steps", Default: 5, Unit: "count", Doc: "decode steps needed before eager decode is judged"},
		{Name: "eager_share", Default: 50, Unit: "%", Doc: "share of decode kernels launched eagerly (not by graph replay) at or above which decode counts as eager"},
		{Name: "tiny_kernel_us", Default: 20, Unit: "µs", Doc: "median decode kernel duration at or below which kernels are tiny (launch cost comparable to their run time)"},
		{Name: "idle_pct", Default: 20, Unit: "%", Doc: "GPU idle share inside eager decode steps at or above which graphs would pay (warning at twice it)"},
	},
	Doc: `Counts CUDA/HIP graph launches (cudaGraphLaunch, hipGraphLaunch) and
the kernels they replay (by correlation, or the kernel's graph id), and
reports them as an info finding: replayed kernels are launched by the
device, so short gaps between them are not host launch overhead.

Decode steps (from the engine's step annotations) that launch at least
eager_share % of their kernels one by one, with a median kernel of at most
tiny_kernel_us, leave the GPU idle between launches: when the GPU is idle
for at least idle_pct % of those steps' GPU window the rule warns (info
from idle_pct, warning from twice it). The estimated saving is that idle
time: graph replay launches the whole step at once. Capture steps
(capture_<bs>_<MODE>) are graph recording, not decode.

Limits: an Nsight Systems capture with --cuda-graph-trace=graph records
each replay as one range, not per kernel; use --cuda-graph-trace=node to
see the kernels.

## How to fix
- vLLM: do not pass --enforce-eager; check that the running batch sizes
  are among the captured ones (cudagraph_capture_sizes,
  max_cudagraph_capture_size) and consider FULL graphs
  (compilation_config cudagraph_mode).
- SGLang: do not pass --disable-cuda-graph; raise --cuda-graph-max-bs to
  the batch sizes you run.
- Plain PyTorch: torch.compile(mode="reduce-overhead") or
  torch.cuda.graphs around the decode step.
`,
	Run: run,
}

// coarsePrefix names the whole-graph spans importers/nsys makes of
// --cuda-graph-trace=graph records.
const coarsePrefix = "[CUDA graph"

func run(p *detectors.Pass) error {
	for _, t := range p.Set.Traces {
		if len(t.Kernels) == 0 {
			continue
		}
		var launches int64
		for i := range t.APICalls {
			if t.CallClass(&t.APICalls[i]) == model.APIGraphLaunch {
				launches++
			}
		}
		graphs := detectors.IndexAPI(t, func(c *model.APICall) bool { return t.CallClass(c) == model.APIGraphLaunch })
		replayed := func(k *model.Kernel) bool {
			return t.KernelGraph(k) != 0 || graphs.Lookup(detectors.CorrKey{Scope: k.CorrScope, Corr: k.Correlation}) >= 0
		}
		var nGraph, coarse int64
		var graphTime, all model.Duration
		for i := range t.Kernels {
			k := &t.Kernels[i]
			all += k.End.Sub(k.Start)
			if strings.HasPrefix(t.Str(k.Name), coarsePrefix) {
				coarse++
			}
			if replayed(k) {
				nGraph++
				graphTime += k.End.Sub(k.Start)
			}
		}
		name := filepath.Base(t.Path)
		if launches > 0 || nGraph > 0 {
			share := detectors.Pct(float64(graphTime), float64(all))
			msg := fmt.Sprintf("%s: %d graph launch(es) replayed %d kernels, %.1f%% of kernel time (%s); gaps between replayed kernels are not host launch overhead.",
				name, launches, nGraph, share, graphTime)
			if coarse > 0 {
				msg += fmt.Sprintf(" %d of them are whole-graph spans (nsys --cuda-graph-trace=graph) that hide the time of each kernel inside; capture with --cuda-graph-trace=node to see it.", coarse)
			}
			p.Report(model.Finding{Severity: model.SevInfo, Title: "CUDA graph replays", Message: msg,
				Metrics: []model.Metric{{Name: "graph_launches", Value: float64(launches), Unit: "count"}, {Name: "graph_kernels", Value: float64(nGraph), Unit: "count"},
					{Name: "graph_kernel_pct", Value: share, Unit: "%"}}})
		}
		eagerDecode(p, t, replayed)
	}
	return nil
}

// eagerDecode judges the decode steps of t.
func eagerDecode(p *detectors.Pass, t *model.Trace, replayed func(*model.Kernel) bool) {
	var dec []model.Step
	for _, s := range p.Set.StepsOf(t) {
		if s.Phase == model.PhaseDecode && s.Correlated {
			dec = append(dec, s)
		}
	}
	if len(dec) < int(p.Param("min_steps")) {
		return
	}
	first, last := dec[0].Start, dec[len(dec)-1].WindowEnd()
	var eager, total int64
	var durs []int64
	for i := range t.Kernels {
		k := &t.Kernels[i]
		if k.Start < first || k.Start > last || model.StepAt(dec, k.Start) == nil {
			continue
		}
		total++
		durs = append(durs, int64(k.End.Sub(k.Start)))
		if !replayed(k) {
			eager++
		}
	}
	if total == 0 {
		return
	}
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	med := model.Quantile(durs, 0.5)
	eagerPct := 100 * float64(eager) / float64(total)
	var idle, window model.Duration
	var kernels int64
	for i := range dec {
		idle += dec[i].Idle
		window += dec[i].Window()
		kernels += dec[i].Kernels
	}
	idlePct := 100 * float64(idle) / float64(max(window, 1))
	if eagerPct < p.Param("eager_share") || med > 1000*p.Param("tiny_kernel_us") || idlePct < p.Param("idle_pct") {
		return
	}
	sev := model.SevInfo
	if idlePct >= 2*p.Param("idle_pct") {
		sev = model.SevWarning
	}
	p.Report(model.Finding{Severity: sev, Title: "Decode launched eagerly, without CUDA graphs", Confidence: model.Estimated,
		Message: fmt.Sprintf("%s: %d decode steps launch %.0f kernels each, %.0f%% of them eagerly, median %s; the GPU is idle %.1f%% of those steps (%s), which graph replay would mostly recover.",
			filepath.Base(t.Path), len(dec), float64(kernels)/float64(len(dec)), eagerPct, model.Duration(med), idlePct, idle),
		Recommendation: "Enable CUDA graphs for decode: drop vLLM --enforce-eager / SGLang --disable-cuda-graph, capture the batch sizes you run, or torch.compile(mode=\"reduce-overhead\").",
		Metrics: []model.Metric{{Name: "eager_kernel_pct", Value: eagerPct, Unit: "%"}, {Name: "median_kernel_ns", Value: med, Unit: "ns"},
			{Name: "idle_pct", Value: idlePct, Unit: "%", Num: float64(idle), Den: float64(window)}, {Name: "est_saving_ns", Value: float64(idle), Unit: "ns"}},
		Evidence: []model.Evidence{{Rank: t.Rank, Device: model.NoDevice, Stream: model.NoStream, Thread: -1, Start: first, End: last, Note: fmt.Sprintf("%d decode steps", len(dec))}}})
}
