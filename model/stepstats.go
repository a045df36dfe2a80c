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
		var walls []int64
		ps := PhaseStats{Phase: ph, TokensPerSec: -1}
		var window, tokWall Duration
		var kernels int64
		for i := range steps {
			s := &steps[i]
			if s.Phase != ph {
				continue
			}
			walls = append(walls, int64(s.Time()))
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
				tokWall += s.Time()
			}
		}
		if len(walls) == 0 {
			continue
		}
		sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
		ps.Count = int64(len(walls))
		ps.P50, ps.P90, ps.P99 = Quantile(walls, 0.5), Quantile(walls, 0.9), Quantile(walls, 0.99)
		ps.Max = Duration(walls[len(walls)-1])
		ps.BusyPct = pctOf(ps.Busy, window)
		if tokWall > 0 {
			ps.TokensPerSec = float64(ps.Tokens) / tokWall.Seconds()
		}
		ps.KernelsPerStep = float64(kernels) / float64(len(walls))
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
