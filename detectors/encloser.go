package detectors

import "github.com/tracedx/tracedx/model"

// Encloser finds, for host calls on a thread, the innermost range of the
// chosen kinds on the same thread that encloses the call. Queries on one
// thread must come in non-decreasing start order (as t.APICalls and t.Ranges
// are sorted).
type Encloser struct {
	t     *model.Trace
	lanes map[model.ThreadID]*lane
}

type lane struct {
	ranges []int32 // indices into t.Ranges, in t.Ranges order (start asc, end desc)
	next   int
	stack  []int32
}

// NewEncloser indexes the ranges of t whose kind is in kinds.
func NewEncloser(t *model.Trace, kinds ...model.RangeKind) *Encloser {
	var want [16]bool
	for _, k := range kinds {
		if int(k) < len(want) {
			want[k] = true
		}
	}
	e := &Encloser{t: t, lanes: map[model.ThreadID]*lane{}}
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Thread == model.NoThread || int(r.Kind) >= len(want) || !want[r.Kind] || r.End < r.Start {
			continue
		}
		l := e.lanes[r.Thread]
		if l == nil {
			l = &lane{}
			e.lanes[r.Thread] = l
		}
		l.ranges = append(l.ranges, int32(i))
	}
	return e
}

// Find returns the index in t.Ranges of the innermost range on th that
// encloses [s, e], or -1.
func (en *Encloser) Find(th model.ThreadID, s, e model.Time) int {
	l := en.lanes[th]
	if l == nil {
		return -1
	}
	rs := en.t.Ranges
	for l.next < len(l.ranges) && rs[l.ranges[l.next]].Start <= s {
		ri := l.ranges[l.next]
		for n := len(l.stack); n > 0 && rs[l.stack[n-1]].End < rs[ri].Start; n = len(l.stack) {
			l.stack = l.stack[:n-1]
		}
		l.stack = append(l.stack, ri)
		l.next++
	}
	for n := len(l.stack); n > 0 && rs[l.stack[n-1]].End < s; n = len(l.stack) {
		l.stack = l.stack[:n-1]
	}
	for i := len(l.stack) - 1; i >= 0; i-- {
		r := &rs[l.stack[i]]
		if r.Start <= s && r.End >= e {
			return int(l.stack[i])
		}
	}
	return -1
}
