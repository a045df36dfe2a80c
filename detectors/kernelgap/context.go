package kernelgap

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/tracedx/tracedx/model"
)

// contextIndex names what a host thread was doing at an instant: the
// innermost range (CPU op, Python frame, NVTX range, user annotation)
// covering it, after the outermost user annotation, else the API call.
type contextIndex struct {
	t      *model.Trace
	ranges map[model.ThreadID][]int32 // t.Ranges order: start ascending
	calls  map[model.ThreadID][]int32 // API calls, shared with hostIndex.calls
	os     map[model.ThreadID][]int32 // OS runtime calls
}

// newContextIndex indexes t's ranges and OS calls; calls is the API calls
// per thread in start order (hostIndex.calls).
func newContextIndex(t *model.Trace, calls map[model.ThreadID][]int32) *contextIndex {
	c := &contextIndex{t: t, ranges: map[model.ThreadID][]int32{}, calls: calls, os: map[model.ThreadID][]int32{}}
	for i := range t.OSCalls {
		o := &t.OSCalls[i]
		c.os[o.Thread] = append(c.os[o.Thread], int32(i))
	}
	for i := range t.Ranges {
		r := &t.Ranges[i]
		switch r.Kind {
		case model.RangeUser, model.RangeStep, model.RangeCPUOp, model.RangePython, model.RangeNVTX:
			if r.Thread != model.NoThread && r.End > r.Start {
				c.ranges[r.Thread] = append(c.ranges[r.Thread], int32(i))
			}
		}
	}
	return c
}

// describe returns "outer > inner" for thread th over the stretch w (""
// when nothing covers it): inner is the API call running at w's middle, else
// the innermost range that covers at least 90% of w (so that a 15 ms
// aten::unflatten_dense_tensors is named rather than the aten::view running
// at the instant), else the innermost range at the middle; outer is the
// outermost user annotation (user range, step, NVTX range).
func (c *contextIndex) describe(th model.ThreadID, w model.Interval) string {
	t := c.t
	p := w.Start + model.Time(w.Len()/2)
	list := c.ranges[th]
	j := sort.Search(len(list), func(i int) bool { return t.Ranges[list[i]].Start > p })
	inner, atP, outer := -1, -1, -1
	for k := j - 1; k >= 0; k-- {
		r := &t.Ranges[list[k]]
		if r.End <= p {
			continue
		}
		if atP < 0 {
			atP = int(list[k])
		}
		if inner < 0 && 10*(model.Interval{Start: max(r.Start, w.Start), End: min(r.End, w.End)}).Len() >= 9*w.Len() {
			inner = int(list[k])
		}
		if r.Kind == model.RangeUser || r.Kind == model.RangeStep || r.Kind == model.RangeNVTX {
			outer = int(list[k])
		}
	}
	if inner < 0 {
		inner = atP
	}
	// An API call running at p is the innermost context (calls nest in
	// ranges); then the innermost range; then an OS runtime call.
	name := ""
	if ai := c.callAt(th, p); ai >= 0 {
		name, inner = t.Str(t.CallName(&t.APICalls[ai])), -2
	} else if inner >= 0 {
		name = shortName(t.Str(t.Ranges[inner].Name))
	} else if oi := c.osCallAt(th, p); oi >= 0 {
		name = t.Str(t.OSCalls[oi].Name) + " (OS call)"
	}
	if outer >= 0 && outer != inner {
		if o := shortName(t.Str(t.Ranges[outer].Name)); o != "" {
			return o + " > " + name
		}
	}
	return name
}

// shortName drops the argument lists that PyTorch's emit_nvtx appends to
// op names (", seq = 12, op_id = 3, sizes = [...]").
func shortName(s string) string {
	for _, cut := range []string{", seq = ", ", op_id = ", ", sizes = "} {
		if i := strings.Index(s, cut); i > 0 {
			s = s[:i]
		}
	}
	if len(s) > maxContext {
		// Cut on a rune boundary.
		n := maxContext
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}

// maxContext bounds one name in a context (DLProf NVTX ranges carry whole
// Python stacks).
const maxContext = 120

// osCallAt returns the OS runtime call on th running at p, or -1 (a long
// poll or read covers the instant).
func (c *contextIndex) osCallAt(th model.ThreadID, p model.Time) int32 {
	return runningAt(c.os[th], p, func(i int32) (model.Time, model.Time) { return c.t.OSCalls[i].Start, c.t.OSCalls[i].End })
}

// callAt returns the API call on th running at p, or -1.
func (c *contextIndex) callAt(th model.ThreadID, p model.Time) int32 {
	return runningAt(c.calls[th], p, func(i int32) (model.Time, model.Time) { return c.t.APICalls[i].Start, c.t.APICalls[i].End })
}

// runningAt returns the entry of list (calls of one thread in start order,
// span giving one's start and end) that runs at p, or -1; only the last 8
// calls that started by p are looked at.
func runningAt(list []int32, p model.Time, span func(int32) (start, end model.Time)) int32 {
	j := sort.Search(len(list), func(i int) bool { s, _ := span(list[i]); return s > p })
	for k := j - 1; k >= 0 && k >= j-8; k-- {
		if _, e := span(list[k]); e > p {
			return list[k]
		}
	}
	return -1
}
