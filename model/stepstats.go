package model

import (
	"math"
	"sort"
)

// PhaseStats are the statistics of the steps of one phase over a set.
// Capture steps form their own phase, so they never enter the
// steady-state (prefill / decode / mixed) statistics.
type PhaseStats struct {
	Phase StepPhase
	Count int64
	// Step time (Step.Time) percentiles (ns; Stats' interpolation) and maximum.
	P50, P90, P99 float64
	Max           Duration
	Time          Duration // summed step time
	Busy          Duration // summed GPU busy time
	// BusyPct is Busy over the summed GPU windows (NaN when no window).
	BusyPct float64
	// Tokens sums the known token counts; TokensPerSec divides it by the
	// time of the steps that give tokens (-1 when none does).
	Tokens       int64
	TokensPerSec float64
	// IdleBetween sums the host gaps after the steps of this phase to the
	// next step on the same thread.
	IdleBetween Duration
	// KernelsPerStep is the mean number of kernels launched per step.
	KernelsPerStep float64
	GraphLaunches  int64
}

// StepPhases summarises steps per phase, in AllStepPhases order; phases
// without steps are left out.
func StepPhases(steps []Step) []PhaseStats {
	var out []PhaseStats
	for _, ph := range AllStepPhases {
		var times []int64
		ps := PhaseStats{Phase: ph, TokensPerSec: -1}
		var window, tokTime Duration
		var kernels int64
		for i := range steps {
			s := &steps[i]
			if s.Phase != ph {
				continue
			}
			times = append(times, int64(s.Time()))
			ps.Time += s.Time()
			ps.Busy += s.Busy
			window += s.Window()
			kernels += s.Kernels
			ps.GraphLaunches += s.GraphLaunches
			if s.IdleBeforeNext > 0 {
				ps.IdleBetween += s.IdleBeforeNext
			}
			if s.Tokens >= 0 {
				ps.Tokens += s.Tokens
				tokTime += s.Time()
			}
		}
		if len(times) == 0 {
			continue
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		ps.Count = int64(len(times))
		ps.P50, ps.P90, ps.P99 = Quantile(times, 0.5), Quantile(times, 0.9), Quantile(times, 0.99)
		ps.Max = Duration(times[len(times)-1])
		ps.BusyPct = pctOf(ps.Busy, window)
		if tokTime > 0 {
			ps.TokensPerSec = float64(ps.Tokens) / tokTime.Seconds()
		}
		ps.KernelsPerStep = float64(kernels) / float64(len(times))
		out = append(out, ps)
	}
	return out
}

func pctOf(a, b Duration) float64 {
	if b <= 0 {
		return math.NaN()
	}
	return 100 * float64(a) / float64(b)
}
