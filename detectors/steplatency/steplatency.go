package steplatency

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Detector is the step-latency rule.
var Detector = &detectors.Detector{
	ID:       "step-latency",
	Title:    "Inference step latency",
	Layer:    model.LayerApplication,
	Severity: model.SevWarning,
	Formats:  detectors.TimelineFormats,
	Needs:    []model.Capability{model.CapAnnotations, model.CapSteps},
	Params: []detectors.Param{
		{Name: "min_steps", Default: 5, Unit: "count", Doc: "steps of a phase needed before its spread, gaps or imbalance are judged"},
		{Name: "outlier_x", Default: 2, Unit: "x", Doc: "a step slower than this multiple of its phase's median is an outlier"},
		{Name: "outlier_pct", Default: 5, Unit: "%", Doc: "time the outliers lose over the median, as a share of the phase's time, at or above which they are reported (warning at twice it)"},
		{Name: "idle_pct", Default: 10, Unit: "%", Doc: "host time between decode steps, as a share of the decode loop, at or above which it is reported (warning at twice it)"},
		{Name: "mixed_x", Default: 2, Unit: "x", Doc: "median mixed (prefill + decode) step over median decode step at or above which prefill is said to stall decode"},
		{Name: "imbalance_pct", Default: 15, Unit: "%", Doc: "spread of the ranks' median step time (slowest over fastest − 1) at or above which it is reported"},
	},
	Doc: `Judges the time of inference engine steps, per phase. Steps come from the
engines' own annotations (vLLM execute_..._context_..._generation_...,
SGLang step[EXTEND|DECODE|MIXED ...], --steps for anything else); a step's
time runs from the host range's start to the later of its end and its last
GPU activity. Graph-capture steps are not steady-state work and are left
out. Training traces with only ProfilerStep#N windows are left to the
other rules.

- **Outliers**: steps of a phase slower than outlier_x × the phase median;
  reported when the time they lose over the median is at least outlier_pct
  of the phase's time (warning at twice that).
- **Scheduler gaps**: host time from the end of a decode step to the start
  of the next step (scheduling, detokenisation, Python) as a share of the
  decode loop (steps plus gaps); at least idle_pct is reported (warning at
  twice that). The GPU is idle during these gaps.
- **Prefill interference**: median mixed step at least mixed_x × the
  median decode step: decode requests wait for prompt chunks.
- **Rank imbalance**: the ranks' median step time of a phase differ by at
  least imbalance_pct: the slowest rank sets the pace of all.

## How to fix
- Scheduler gaps: vLLM --async-scheduling (V1) or SGLang's overlap
  scheduler (on by default; check --disable-overlap-schedule is not set);
  CUDA graphs for decode; move detokenisation and logging off the engine
  loop; fewer, larger batches (max_num_seqs / --max-running-requests).
- Outliers: look at what the slow steps run (batch size, tokens, graph vs
  eager in the steps table); recompilation, a graph miss (batch size
  outside the captured sizes), KV-cache preemption or a garbage-collector
  pause are common causes.
- Prefill interference: chunked prefill with a smaller chunk
  (--max-num-batched-tokens, SGLang --chunked-prefill-size), or
  prefill/decode disaggregation.
- Rank imbalance: check the slow rank's GPU (clocks, thermals, other
  tenants) and its share of the work (uneven expert or data placement).
`,
	Run: run,
}

// steady are the phases judged (capture, idle and unknown are not).
var steady = []model.StepPhase{model.PhasePrefill, model.PhaseDecode, model.PhaseMixed}

type rankSteps struct {
	t     *model.Trace
	steps []model.Step
}

func run(p *detectors.Pass) error {
	var ranks []rankSteps
	for _, t := range p.Set.Traces {
		if st := p.Set.StepsOf(t); len(st) > 0 && !st[0].IsProfilerStep() {
			ranks = append(ranks, rankSteps{t, st})
		}
	}
	if len(ranks) == 0 {
		// Training loops (ProfilerStep#N only) and traces without step
		// annotations: nothing of this rule applies; stay out of the report.
		return nil
	}
	minSteps := int(p.Param("min_steps"))
	judged := false
	for _, rs := range ranks {
		for _, ph := range steady {
			sel := ofPhase(rs.steps, ph)
			if len(sel) < minSteps {
				continue
			}
			judged = true
			outliers(p, rs, ph, sel)
			if ph == model.PhaseDecode {
				gaps(p, rs, sel)
			}
		}
		interference(p, rs, minSteps)
	}
	imbalance(p, ranks, minSteps)
	if !judged {
		p.NotMeasurable("fewer than %d prefill, decode or mixed steps per phase: too few engine steps to judge step spread", minSteps)
	}
	return nil
}

func ofPhase(steps []model.Step, ph model.StepPhase) []*model.Step {
	var out []*model.Step
	for i := range steps {
		if steps[i].Phase == ph {
			out = append(out, &steps[i])
		}
	}
	return out
}

func median(sel []*model.Step) float64 {
	v := make([]int64, len(sel))
	for i, s := range sel {
		v[i] = int64(s.Time())
	}
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	return model.Quantile(v, 0.5)
}

func ev(rs rankSteps, s *model.Step, note string) model.Evidence {
	return model.Evidence{Rank: rs.t.Rank, Device: model.NoDevice, Stream: model.NoStream, Thread: detectors.TID(rs.t, s.Thread), Start: s.Start, End: s.WindowEnd(), Note: note}
}

func outliers(p *detectors.Pass, rs rankSteps, ph model.StepPhase, sel []*model.Step) {
	med := median(sel)
	var total, excess float64
	var out []*model.Step
	for _, s := range sel {
		total += float64(s.Time())
		if float64(s.Time()) > p.Param("outlier_x")*med {
			out = append(out, s)
			excess += float64(s.Time()) - med
		}
	}
	share := 100 * excess / total
	if len(out) == 0 || share < p.Param("outlier_pct") {
		return
	}
	sev := model.SevInfo
	if share >= 2*p.Param("outlier_pct") {
		sev = model.SevWarning
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time() > out[j].Time() })
	var evs []model.Evidence
	for _, s := range out[:min(5, len(out))] {
		evs = append(evs, ev(rs, s, fmt.Sprintf("%s step %d: %s (%.1fx the median), batch %s, %d kernels, %d graph launches", ph, s.Index, s.Time(),
			float64(s.Time())/med, orDash(s.BatchSize), s.Kernels, s.GraphLaunches)))
	}
	p.Report(model.Finding{Severity: sev, Title: fmt.Sprintf("Slow %s steps", ph),
		Message: fmt.Sprintf("%s: %d of %d %s steps took more than %.1fx the median %s (slowest %s); they lose %s, %.1f%% of the %s time.",
			filepath.Base(rs.t.Path), len(out), len(sel), ph, p.Param("outlier_x"), model.Duration(med), out[0].Time(), model.Duration(excess), share, ph),
		Recommendation: "Compare the slow steps with the typical ones in the steps table (batch size, tokens, graph launches): a batch size outside the captured CUDA graphs, recompilation, KV-cache preemption or a GC pause are the usual causes.",
		Metrics: []model.Metric{{Name: "outliers", Value: float64(len(out)), Unit: "count"}, {Name: "median_ns", Value: med, Unit: "ns"},
			{Name: "lost_pct", Value: share, Unit: "%", Num: excess, Den: total}},
		Evidence: evs})
}

func gaps(p *detectors.Pass, rs rankSteps, sel []*model.Step) {
	var busy, idle model.Duration
	var gs []int64
	var worst *model.Step
	for _, s := range sel {
		busy += s.Time()
		if s.IdleBeforeNext > 0 {
			idle += s.IdleBeforeNext
			gs = append(gs, int64(s.IdleBeforeNext))
			if worst == nil || s.IdleBeforeNext > worst.IdleBeforeNext {
				worst = s
			}
		}
	}
	share := 100 * float64(idle) / float64(busy+idle)
	if worst == nil || share < p.Param("idle_pct") {
		return
	}
	sev := model.SevInfo
	if share >= 2*p.Param("idle_pct") {
		sev = model.SevWarning
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i] < gs[j] })
	med := model.Quantile(gs, 0.5)
	e := ev(rs, worst, "")
	e.Start, e.End, e.Note = worst.WindowEnd(), worst.WindowEnd()+model.Time(worst.IdleBeforeNext), fmt.Sprintf("longest gap after decode step %d: %s", worst.Index, worst.IdleBeforeNext)
	p.Report(model.Finding{Severity: sev, Title: "Host time between decode steps",
		Message: fmt.Sprintf("%s: %.1f%% of the decode loop (%s of %s) is host time between steps, median %s per gap over %d gaps; the GPU waits for the scheduler.",
			filepath.Base(rs.t.Path), share, idle, busy+idle, model.Duration(med), len(gs)),
		Recommendation: "Overlap scheduling with the GPU: vLLM --async-scheduling, SGLang's overlap scheduler (do not pass --disable-overlap-schedule); keep detokenisation and logging off the engine loop.",
		Metrics:        []model.Metric{{Name: "idle_pct", Value: share, Unit: "%", Num: float64(idle), Den: float64(busy + idle)}, {Name: "median_gap_ns", Value: med, Unit: "ns"}},
		Evidence:       []model.Evidence{e}})
}

func interference(p *detectors.Pass, rs rankSteps, minSteps int) {
	mixed, dec := ofPhase(rs.steps, model.PhaseMixed), ofPhase(rs.steps, model.PhaseDecode)
	if len(mixed) == 0 || len(dec) < minSteps {
		return
	}
	mm, dm := median(mixed), median(dec)
	if dm <= 0 || mm < p.Param("mixed_x")*dm {
		return
	}
	var lost float64
	for _, s := range mixed {
		lost += max(0, float64(s.Time())-dm)
	}
	p.Report(model.Finding{Severity: model.SevInfo, Title: "Prefill chunks stall decode",
		Message: fmt.Sprintf("%s: the %d mixed steps take %s at the median, %.1fx the %s of a decode step; decode requests in them wait %s in all.",
			filepath.Base(rs.t.Path), len(mixed), model.Duration(mm), mm/dm, model.Duration(dm), model.Duration(lost)),
		Recommendation: "Use a smaller prefill chunk (vLLM --max-num-batched-tokens, SGLang --chunked-prefill-size) or disaggregate prefill and decode when inter-token latency matters.",
		Metrics:        []model.Metric{{Name: "mixed_over_decode", Value: mm / dm, Unit: "x"}, {Name: "mixed_steps", Value: float64(len(mixed)), Unit: "count"}},
		Evidence:       []model.Evidence{ev(rs, mixed[0], "first mixed step")}})
}

func imbalance(p *detectors.Pass, ranks []rankSteps, minSteps int) {
	if len(ranks) < 2 {
		return
	}
	for _, ph := range steady {
		type rm struct {
			rs  rankSteps
			med float64
		}
		var ms []rm
		for _, rs := range ranks {
			if sel := ofPhase(rs.steps, ph); len(sel) >= minSteps {
				ms = append(ms, rm{rs, median(sel)})
			}
		}
		if len(ms) < 2 {
			continue
		}
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].med < ms[j].med })
		lo, hi := ms[0], ms[len(ms)-1]
		spread := 100 * (hi.med/lo.med - 1)
		if lo.med <= 0 || spread < p.Param("imbalance_pct") {
			continue
		}
		p.Report(model.Finding{Severity: model.SevWarning, Title: fmt.Sprintf("Unequal %s step time across ranks", ph),
			Message: fmt.Sprintf("median %s step: rank %d %s, rank %d %s (+%.0f%%) over %d ranks; every rank waits for the slowest at each collective.",
				ph, hi.rs.t.Rank, model.Duration(hi.med), lo.rs.t.Rank, model.Duration(lo.med), spread, len(ms)),
			Recommendation: "Check the slow rank's GPU (clocks, thermals, other processes) and its share of the work (expert placement, uneven sequence lengths).",
			Metrics:        []model.Metric{{Name: "spread_pct", Value: spread, Unit: "%"}, {Name: "ranks", Value: float64(len(ms)), Unit: "count"}}})
	}
}

func orDash(v int64) string {
	if v < 0 {
		return "-"
	}
	return fmt.Sprint(v)
}
