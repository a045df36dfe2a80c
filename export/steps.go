package export

import (
	"fmt"
	"math"
	"sort"

	"github.com/tracedx/tracedx/model"
)

// JSON wire form of the step model (schema_version "1" additions). Unknown
// numbers are null.
type (
	jsonStep struct {
		Rank             int      `json:"rank"`
		Index            int      `json:"index"`
		Name             string   `json:"name"`
		Engine           string   `json:"engine"`
		Phase            string   `json:"phase"`
		BatchSize        *int64   `json:"batch_size"`
		Tokens           *int64   `json:"tokens"`
		KVLen            *int64   `json:"kv_len"`
		Extra            string   `json:"extra,omitempty"`
		StartNs          int64    `json:"start_ns"`
		EndNs            int64    `json:"end_ns"`
		WallNs           int64    `json:"wall_ns"`
		TimeNs           int64    `json:"time_ns"`
		BusyNs           *int64   `json:"busy_ns"`
		IdleNs           *int64   `json:"idle_ns"`
		IdleBeforeNextNs *int64   `json:"idle_before_next_ns"`
		Kernels          *int64   `json:"kernels"`
		GraphLaunches    int64    `json:"graph_launches"`
		TokensPerSec     *float64 `json:"tokens_per_s"`
	}
	jsonStepPhase struct {
		Phase          string   `json:"phase"`
		Count          int64    `json:"count"`
		P50Ns          *float64 `json:"p50_ns"`
		P90Ns          *float64 `json:"p90_ns"`
		P99Ns          *float64 `json:"p99_ns"`
		MaxNs          int64    `json:"max_ns"`
		TimeNs         int64    `json:"time_ns"`
		BusyNs         int64    `json:"busy_ns"`
		BusyPct        *float64 `json:"busy_pct"`
		Tokens         int64    `json:"tokens"`
		TokensPerSec   *float64 `json:"tokens_per_s"`
		IdleBetweenNs  int64    `json:"idle_between_ns"`
		KernelsPerStep float64  `json:"kernels_per_step"`
		GraphLaunches  int64    `json:"graph_launches"`
		// ByClass is the kernel time per class of the kernels that start
		// inside steps of this phase.
		ByClass map[string]int64 `json:"by_class,omitempty"`
	}
)

// knownF returns &f, or nil when f is negative (unknown), NaN or infinite.
func knownF(f float64) *float64 {
	if f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// jsonStepsOf converts the report's steps and per-phase statistics.
func jsonStepsOf(r *model.Report) ([]jsonStep, []jsonStepPhase) {
	var steps []jsonStep
	var phases []jsonStepPhase
	for i := range r.Steps {
		s := &r.Steps[i]
		js := jsonStep{Rank: s.Rank, Index: s.Index, Name: s.Name, Engine: s.Engine, Phase: string(s.Phase), BatchSize: optI(s.BatchSize),
			Tokens: optI(s.Tokens), KVLen: optI(s.KVLen), Extra: s.Extra, StartNs: int64(s.Start), EndNs: int64(s.End), WallNs: int64(s.Wall()), TimeNs: int64(s.Time()),
			IdleBeforeNextNs: optI(int64(s.IdleBeforeNext)), GraphLaunches: s.GraphLaunches, TokensPerSec: knownF(round(s.TokensPerSec(), 1))}
		if s.Correlated {
			js.BusyNs, js.IdleNs, js.Kernels = optI(int64(s.Busy)), optI(int64(s.Idle)), optI(s.Kernels)
		}
		steps = append(steps, js)
	}
	for _, p := range r.StepPhases {
		phases = append(phases, jsonStepPhase{Phase: string(p.Phase), Count: p.Count, P50Ns: optF(p.P50), P90Ns: optF(p.P90), P99Ns: optF(p.P99),
			MaxNs: int64(p.Max), TimeNs: int64(p.Time), BusyNs: int64(p.Busy), BusyPct: knownF(round(p.BusyPct, 2)), Tokens: p.Tokens,
			TokensPerSec: knownF(round(p.TokensPerSec, 1)), IdleBetweenNs: int64(p.IdleBetween), KernelsPerStep: round(p.KernelsPerStep, 2),
			GraphLaunches: p.GraphLaunches, ByClass: phaseClasses(r, p.Phase)})
	}
	return steps, phases
}

// maxSlowSteps bounds the slowest-steps table.
const maxSlowSteps = 10

// stepTables builds the per-phase step table and the slowest steps.
func stepTables(r *model.Report, limit int) []sumTable {
	if len(r.StepPhases) == 0 {
		return opTable(r)
	}
	ph := sumTable{id: "step-phases", title: "Steps by phase",
		note: "Step time runs from the host step range's start to the later of its end and its last GPU activity; busy % = GPU busy over the step's GPU window (start to the later of its end and its last kernel); idle between = host gap to the next step (scheduler overhead). Capture steps record CUDA graphs and are kept apart.",
		head: []string{"phase", "steps", "p50", "p90", "p99", "max", "busy %", "tokens/s", "idle between", "kernels/step", "graph launches"}}
	for _, p := range r.StepPhases {
		busy, tps := cell{s: "-"}, cell{s: "-"}
		if !math.IsNaN(p.BusyPct) {
			busy = plain("%.1f%%", p.BusyPct)
		}
		if p.TokensPerSec >= 0 {
			tps = plain("%.0f", p.TokensPerSec)
		}
		ph.rows = append(ph.rows, []cell{plain("%s", p.Phase), plain("%d", p.Count), fdur(p.P50), fdur(p.P90), fdur(p.P99), dur(p.Max),
			busy, tps, dur(p.IdleBetween), plain("%.1f", p.KernelsPerStep), plain("%d", p.GraphLaunches)})
	}
	n := maxSlowSteps
	if limit > 0 && limit < n {
		n = limit
	}
	idx := make([]int, len(r.Steps))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return r.Steps[idx[a]].Time() > r.Steps[idx[b]].Time() })
	more := 0
	if len(idx) > n {
		idx, more = idx[:n], len(idx)-n
	}
	slow := sumTable{id: "steps", title: "Slowest steps", note: fmt.Sprintf("%d step(s) in all; - = the name or the capture does not say.", len(r.Steps)),
		head: []string{"rank", "step", "phase", "batch", "tokens", "time", "host", "GPU busy", "GPU idle", "idle after", "kernels", "graphs", "name"}, more: more}
	for _, i := range idx {
		s := &r.Steps[i]
		busy, idle, kern := cell{s: "-"}, cell{s: "-"}, cell{s: "-"}
		if s.Correlated {
			busy, idle, kern = dur(s.Busy), dur(s.Idle), plain("%d", s.Kernels)
		}
		slow.rows = append(slow.rows, []cell{plain("%s", rankLabel(s.Rank)), plain("%d", s.Index), plain("%s", s.Phase), num(s.BatchSize), num(s.Tokens),
			dur(s.Time()), dur(s.Wall()), busy, idle, optDur(s.IdleBeforeNext), kern, plain("%d", s.GraphLaunches), nameCell(s.Name)})
	}
	return append(opTable(r), ph, slow)
}

func num(v int64) cell {
	if v < 0 {
		return cell{s: "-"}
	}
	return plain("%d", v)
}
