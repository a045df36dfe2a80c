package model

import (
	"sort"
)

// Step is one engine step (or training-loop step) of one rank: the host
// range that ran it, what its name says, and the GPU work it launched.
//
// GPU work is the kernels, copies and sets launched by runtime calls made
// on the step's thread inside the step (by correlation; graph launches
// bring every kernel of the replay). Busy is the length of their union;
// Idle is the rest of the step's GPU window, which runs from the step's
// start to the later of its end and its last GPU activity's end.
type Step struct {
	Rank   int
	Thread ThreadID
	// Index is the step's position on its rank (0-based, in time order).
	Index int
	Name  string
	StepLabel
	Start, End Time
	// GPUStart and GPUEnd bound the GPU work the step launched (zero when none).
	GPUStart, GPUEnd Time
	Busy, Idle       Duration
	// IdleBeforeNext is the host gap to the next step on the same thread
	// (scheduler / CPU overhead between steps); -1 for the last step.
	IdleBeforeNext Duration
	Kernels        int64
	GraphLaunches  int64
	// Correlated says whether GPU work was found by correlation; false means
	// the capture has no launch correlation and nothing was attributed.
	Correlated bool
}

// Wall is the step's host duration.
func (s *Step) Wall() Duration { return s.End.Sub(s.Start) }

// WindowEnd is the end of the step's GPU window: the later of its end and
// its last GPU activity.
func (s *Step) WindowEnd() Time { return max(s.End, s.GPUEnd) }

// Window is the step's GPU window: from its start to WindowEnd.
func (s *Step) Window() Duration { return s.WindowEnd().Sub(s.Start) }

// StepAt returns the step of steps (sorted by start) whose GPU window holds
// at, or nil. Only the last step starting at or before at is looked at.
func StepAt(steps []Step, at Time) *Step {
	i := sort.Search(len(steps), func(i int) bool { return steps[i].Start > at }) - 1
	if i >= 0 && at <= steps[i].WindowEnd() {
		return &steps[i]
	}
	return nil
}

// Time is the step's latency. For engine steps it is the GPU window, so
// that a step whose host range returns before the GPU finishes (graph
// replay, asynchronous launch) is not counted short. For ProfilerStep#N
// windows it is the host duration: a training loop runs ahead of the GPU,
// and each step's window would reach into the next step.
func (s *Step) Time() Duration {
	if s.IsProfilerStep() {
		return s.Wall()
	}
	return s.Window()
}

// TokensPerSec is tokens over the step's time; -1 when unknown.
func (s *Step) TokensPerSec() float64 {
	if s.Tokens < 0 || s.Time() <= 0 {
		return -1
	}
	return float64(s.Tokens) / s.Time().Seconds()
}

// StepParser reads step names; *StepGrammar satisfies it.
type StepParser interface {
	Parse(name string) (StepLabel, bool)
}

// stepCandidate is a host range whose name parses as a step.
type stepCandidate struct {
	r     *Range
	label StepLabel
}

// FindSteps returns the steps of t in time order. custom (may be nil) is
// tried before the built-in grammars. When a trace has engine steps, the
// ProfilerStep#N windows around them are not steps; an engine range nested
// in another on the same thread (SGLang's step[...] inside vLLM-style
// execute_...) fills the unknown fields of the outer one.
func FindSteps(t *Trace, custom StepParser) []Step {
	cands := stepCandidates(t, custom)
	if len(cands) == 0 {
		return nil
	}
	steps := make([]Step, 0, len(cands))
	for _, c := range cands {
		steps = append(steps, Step{Rank: t.Rank, Thread: c.r.Thread, Name: t.Str(c.r.Name), StepLabel: c.label,
			Start: c.r.Start, End: c.r.End, IdleBeforeNext: -1})
	}
	attachGPU(t, steps)
	sort.SliceStable(steps, func(i, j int) bool {
		if steps[i].Start != steps[j].Start {
			return steps[i].Start < steps[j].Start
		}
		return steps[i].Thread < steps[j].Thread
	})
	last := map[ThreadID]int{}
	for i := range steps {
		steps[i].Index = i
		if j, ok := last[steps[i].Thread]; ok {
			steps[j].IdleBeforeNext = max(0, steps[i].Start.Sub(steps[j].End))
		}
		last[steps[i].Thread] = i
	}
	return steps
}

func stepCandidates(t *Trace, custom StepParser) []stepCandidate {
	var cands []stepCandidate
	engine := false
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Thread == NoThread || r.End < r.Start || (r.Kind != RangeStep && r.Kind != RangeUser && r.Kind != RangeNVTX) {
			continue
		}
		name := t.Str(r.Name)
		var l StepLabel
		ok := false
		if custom != nil {
			l, ok = custom.Parse(name)
		}
		if !ok {
			l, ok = ParseStepName(name)
		}
		if !ok {
			continue
		}
		engine = engine || !l.IsProfilerStep()
		cands = append(cands, stepCandidate{r, l})
	}
	if engine {
		kept := cands[:0]
		for _, c := range cands {
			if !c.label.IsProfilerStep() {
				kept = append(kept, c)
			}
		}
		cands = kept
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i].r, cands[j].r
		if a.Thread != b.Thread {
			return a.Thread < b.Thread
		}
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		return a.End > b.End
	})
	// Fold nested candidates into their outermost enclosing one.
	out := cands[:0]
	for _, c := range cands {
		if n := len(out); n > 0 && out[n-1].r.Thread == c.r.Thread && c.r.Start >= out[n-1].r.Start && c.r.End <= out[n-1].r.End {
			out[n-1].label = fill(out[n-1].label, c.label)
			continue
		}
		out = append(out, c)
	}
	return out
}

// fill completes the unknown fields of outer from inner.
func fill(outer, inner StepLabel) StepLabel {
	if outer.Phase == PhaseUnknown {
		outer.Phase = inner.Phase
	}
	for _, p := range [][2]*int64{{&outer.BatchSize, &inner.BatchSize}, {&outer.Tokens, &inner.Tokens},
		{&outer.Prefills, &inner.Prefills}, {&outer.Decodes, &inner.Decodes}, {&outer.KVLen, &inner.KVLen}} {
		if *p[0] < 0 {
			*p[0] = *p[1]
		}
	}
	if inner.Extra != "" {
		if outer.Extra != "" {
			outer.Extra += " "
		}
		outer.Extra += inner.Extra
	}
	if outer.Engine == "" || outer.Engine == "vllm" && inner.Engine == "sglang" {
		// SGLang annotates its steps with both grammars.
		outer.Engine = inner.Engine
	}
	return outer
}
