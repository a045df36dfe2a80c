package model

import "sort"

// TraceSet groups the traces of one job: one trace per rank.
type TraceSet struct {
	Traces []*Trace
	// WorldSize is the job's rank count when an input states it (0 = unknown;
	// never guessed from the number of inputs).
	WorldSize int
	// Offsets[i] is added to Traces[i]'s times to place them on the set's
	// common clock (0 when the traces share an epoch clock).
	Offsets []Duration
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
