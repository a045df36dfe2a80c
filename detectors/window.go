package detectors

import (
	"fmt"
	"sort"

	"github.com/tracedx/tracedx/model"
)

// HostSpan returns the span of host activity: from the first start to the
// last end of API calls and ranges on CPU threads. When the trace has no host
// activity it falls back to the span of GPU activity (kernels, memory
// operations). ok is false when the trace has neither.
func HostSpan(t *model.Trace) (span model.Interval, ok bool) {
	first := true
	add := func(s, e model.Time) {
		if first {
			span = model.Interval{Start: s, End: e}
			first = false
			return
		}
		span.Start = min(span.Start, s)
		span.End = max(span.End, e)
	}
	for i := range t.APICalls {
		add(t.APICalls[i].Start, t.APICalls[i].End)
	}
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Thread != model.NoThread && r.Kind != model.RangeGPUAnnotation {
			add(r.Start, r.End)
		}
	}
	if first {
		for i := range t.Kernels {
			add(t.Kernels[i].Start, t.Kernels[i].End)
		}
		for i := range t.MemOps {
			add(t.MemOps[i].Start, t.MemOps[i].End)
		}
	}
	return span, !first && span.End > span.Start
}

// Steady returns the steady-state part of span: when the trace has more than
// warmupSteps step ranges (ProfilerStep#N) on CPU threads, the window runs
// from the start of step number warmupSteps (0-based) to the end of the last
// step; otherwise it skips the first warmupPct percent of span. how
// describes the choice for messages.
func Steady(t *model.Trace, span model.Interval, warmupSteps int, warmupPct float64) (steady model.Interval, how string) {
	var steps []model.Time
	var lastEnd model.Time
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Kind == model.RangeStep && r.Thread != model.NoThread && r.Depth == 0 {
			steps = append(steps, r.Start)
			lastEnd = max(lastEnd, r.End)
		}
	}
	if warmupSteps <= 0 && warmupPct <= 0 {
		return span, "whole trace"
	}
	if warmupSteps > 0 && len(steps) > warmupSteps {
		sort.Slice(steps, func(i, j int) bool { return steps[i] < steps[j] })
		cut := max(steps[warmupSteps], span.Start)
		// Work after the last step is teardown (the profiler's own final
		// synchronisation, saving results): not steady state either.
		end := min(span.End, lastEnd)
		return model.Interval{Start: cut, End: end}, fmt.Sprintf("steps %d to %d of %d", warmupSteps+1, len(steps), len(steps))
	}
	if warmupPct <= 0 {
		return span, "whole trace"
	}
	cut := span.Start + model.Time(float64(span.Len())*warmupPct/100)
	return model.Interval{Start: cut, End: span.End}, fmt.Sprintf("after the first %s%% of the span", FormatFloat(warmupPct))
}

// StepWindows returns the union of t's step ranges (ProfilerStep#N and
// equivalents on CPU threads) clipped to span.
func StepWindows(t *model.Trace, span model.Interval) []model.Interval {
	var ivs []model.Interval
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Kind != model.RangeStep || r.Thread == model.NoThread {
			continue
		}
		s, e := max(r.Start, span.Start), min(r.End, span.End)
		if e > s {
			ivs = append(ivs, model.Interval{Start: s, End: e})
		}
	}
	return Union(ivs)
}
