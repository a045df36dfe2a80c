// Package tracehealth implements the trace-health detector: what each capture
// can and cannot answer, and what went wrong while reading it.
//
// Place in the pipeline: detectors/all registers it first; it reads the model only.
package tracehealth

import (
	"fmt"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Detector is the trace-health rule.
var Detector = &detectors.Detector{
	ID:       "trace-health",
	Title:    "What the capture can and cannot answer",
	Layer:    model.LayerAll,
	Severity: model.SevInfo,
	Params: []detectors.Param{
		{Name: "warn_warnings", Default: 100, Unit: "count", Doc: "import warnings at or above which the finding is a warning"},
	},
	Doc: `Reports, per input, what the capture observed and what it did not, so that a
missing finding is never mistaken for a healthy system: no GPU activity (told
apart by the host calls: a CPU-only capture has no device launches; launches
without device records mean the activity records were lost, a warning, with
the likely reasons; CUDA calls that launched nothing mean the capture ended
during CUDA initialisation), device records partly lost (far fewer kernels
than kernel launches), no host-side API calls (GPU-only trace: gap causes cannot be told), no
framework operators or Python stacks, no step markers (step latency cannot be
measured), a non-GPU accelerator, and the number of records that could not be
read (import warnings).

## How to fix
Re-capture with the missing sources turned on: torch.profiler with
activities=[CPU, CUDA], record_shapes, with_stack and a schedule that marks steps
(prof.step()); or nsys profile --trace=cuda,nvtx,osrt,cudnn,cublas
--cuda-memory-usage=true (and --python-backtrace / --gpu-metrics-devices where
available). Repair or re-export files that produced many import warnings.
`,
	Run: run,
}

func run(p *detectors.Pass) error {
	warnAt := int(p.Param("warn_warnings"))
	for _, t := range p.Set.Traces {
		if t.Format == model.FormatNCCLTests || t.Format == model.FormatJobLog {
			continue
		}
		var gaps []string
		sev := model.SevInfo
		hasGPU := t.Caps.Has(model.CapKernels) || t.Caps.Has(model.CapMemOps)
		launches, kernelLaunches := countLaunches(t)
		switch {
		case !hasGPU && t.Caps.Has(model.CapAccelOnly):
			gaps = append(gaps, "no GPU activity: the device activity is of a non-GPU accelerator")
		case !hasGPU:
			g, warn := noGPUActivity(t, launches)
			gaps = append(gaps, g)
			if warn {
				sev = model.SevWarning
			}
		default:
			if g := partialLoss(t, kernelLaunches); g != "" {
				gaps = append(gaps, g)
			}
		}
		if hasGPU && !t.Caps.Has(model.CapAPICalls) {
			gaps = append(gaps, "no host-side runtime API calls (GPU-only trace): causes of GPU idle time are not measurable")
		}
		if t.Format == model.FormatKineto && !t.Caps.Has(model.CapCPUOps) && hasGPU {
			gaps = append(gaps, "no framework operators: kernels cannot be attributed to PyTorch ops")
		}
		if !t.Caps.Has(model.CapSteps) {
			gaps = append(gaps, "no step markers (ProfilerStep / NVTX step ranges): per-step latency is not measurable")
		}
		if len(t.Warnings) >= warnAt {
			sev = model.SevWarning
		}
		notes := append([]string(nil), t.Caps.Notes...)
		if len(gaps) == 0 && len(notes) == 0 && len(t.Warnings) == 0 {
			continue // a complete, clean capture: nothing to say
		}
		msg := fmt.Sprintf("%s (%s) holds: %s.", baseName(t.Path), t.Format, orNone(strings.Join(t.Caps.Names(), ", ")))
		if len(gaps) > 0 {
			msg += " Not observed: " + strings.Join(gaps, "; ") + "."
		}
		if len(notes) > 0 {
			msg += " Notes: " + strings.Join(notes, "; ") + "."
		}
		if len(t.Warnings) > 0 {
			msg += fmt.Sprintf(" %d records could not be read as expected (see warnings).", len(t.Warnings))
		}
		title := "Capture holds " + orNone(strings.Join(t.Caps.Names(), ", "))
		if len(gaps) > 0 {
			title = fmt.Sprintf("Capture is missing %d kinds of evidence", len(gaps))
		}
		p.Report(model.Finding{
			Severity: sev,
			Title:    title,
			Message:  msg,
			Metrics: []model.Metric{
				{Name: "warnings", Value: float64(len(t.Warnings)), Unit: "count"},
				{Name: "kernels", Value: float64(len(t.Kernels)), Unit: "count"},
				{Name: "api_calls", Value: float64(len(t.APICalls)), Unit: "count"},
				{Name: "launches", Value: float64(launches), Unit: "count"},
				{Name: "missing_kinds", Value: float64(len(gaps)), Unit: "count"},
			},
			Evidence:       []model.Evidence{{Rank: t.Rank, Device: model.NoDevice, Stream: model.NoStream, Thread: -1, Start: t.Capture.Start, End: t.Capture.End, Note: baseName(t.Path)}},
			Recommendation: "Re-capture with the missing sources enabled (see `tracedx rules explain trace-health`).",
		})
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// countLaunches counts the host calls that put work on a device (kernel and
// graph launches, copies, memsets) and the kernel launches alone.
func countLaunches(t *model.Trace) (work, kernels int) {
	for i := range t.APICalls {
		switch t.CallClass(&t.APICalls[i]) {
		case model.APILaunch:
			work++
			kernels++
		case model.APIGraphLaunch, model.APIMemcpy, model.APIMemset:
			work++
		}
	}
	return work, kernels
}

// noGPUActivity says why a capture has no device activity, from its host
// calls: a CPU-only capture only when nothing was launched; launches without
// device records mean the records were lost; CUDA calls that launched
// nothing mean the capture ended during initialisation. work is the count
// of work-submitting calls (countLaunches). warn is set when records were
// lost.
func noGPUActivity(t *model.Trace, work int) (gap string, warn bool) {
	switch {
	case work > 0:
		return fmt.Sprintf("device activity records lost (%d launches, 0 kernels): GPU work was launched but none of it was recorded; likely the CUPTI activity buffers overflowed or were not flushed (the capture or process ended early, e.g. killed or no cudaProfilerStop / cuptiActivityFlushAll), or GPU activity tracing was disabled (nsys --trace without cuda, CUPTI activity kinds off); GPU utilisation and kernel gaps are not measurable", work), true
	case len(t.APICalls) > 0:
		return fmt.Sprintf("no GPU work launched: the %d CUDA calls recorded launched nothing (the capture ended during CUDA initialisation, or the program failed before its first kernel); GPU utilisation and kernel gaps are not measurable", len(t.APICalls)), false
	}
	return "no GPU activity recorded and no device launches (CPU-only capture, or CUDA tracing off): GPU utilisation and kernel gaps are not measurable", false
}

// partialLoss notes a capture that recorded far fewer kernels than kernel
// launches (graph launches excluded: one launch runs many kernels).
func partialLoss(t *model.Trace, launches int) string {
	plain := 0
	for i := range t.Kernels {
		if t.KernelGraph(&t.Kernels[i]) == 0 {
			plain++
		}
	}
	if launches >= 100 && plain < launches/2 {
		return fmt.Sprintf("device activity records partly lost: %d kernel launches but %d kernels outside CUDA graphs recorded (activity buffer overflow or capture ended before the records were flushed); GPU time is undercounted", launches, plain)
	}
	return ""
}
