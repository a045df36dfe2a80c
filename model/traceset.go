package model

import (
	"sort"
	"sync"
)

// TraceSet groups the traces of one job: one trace per rank.
type TraceSet struct {
	Traces []*Trace
	// WorldSize is the job's rank count when an input states it (0 = unknown;
	// never guessed from the number of inputs).
	WorldSize int
	// Offsets[i] is added to Traces[i]'s times to place them on the set's
	// common clock (0 when the traces share an epoch clock).
	Offsets []Duration
	// Steps, when set, is the user's step grammar (--steps), tried before
	// the built-in ones by FindSteps.
	Steps StepParser

	stepMu   sync.Mutex
	stepMemo map[*Trace][]Step
}

// StepsOf returns FindSteps(t, s.Steps), computed once per trace of the
// set (detectors and the report share it; callers must not modify it).
func (s *TraceSet) StepsOf(t *Trace) []Step {
	s.stepMu.Lock()
	defer s.stepMu.Unlock()
	if st, ok := s.stepMemo[t]; ok {
		return st
	}
	if s.stepMemo == nil {
		s.stepMemo = map[*Trace][]Step{}
	}
	st := FindSteps(t, s.Steps)
	s.stepMemo[t] = st
	return st
}

// NewTraceSet groups traces, orders them by rank (then path) and fills in the
// world size from the traces when they agree.
func NewTraceSet(traces []*Trace) *TraceSet {
	ts := &TraceSet{Traces: append([]*Trace(nil), traces...)}
	sort.SliceStable(ts.Traces, func(i, j int) bool {
		a, b := ts.Traces[i], ts.Traces[j]
		if a.Rank != b.Rank {
			return a.Rank < b.Rank
		}
		return a.Path < b.Path
	})
	ts.Offsets = make([]Duration, len(ts.Traces))
	ts.WorldSize = ts.Job().WorldSize
	return ts
}

// Job returns the job the set's traces belong to.
func (ts *TraceSet) Job() Job { return JobOf(ts.Traces) }
