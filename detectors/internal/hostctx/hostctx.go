package hostctx

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/detectors"
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

// FormatFloat formats v with up to two decimals and no trailing zeros, so
// that messages are stable.
func FormatFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// Pct returns 100*num/den, or 0 when den is 0.
func Pct(num, den float64) float64 {
	if den == 0 {
		return 0
	}
	return 100 * num / den
}

// CorrKey identifies an API call or GPU activity by correlation within its
// scope (the process for Nsight Systems, 0 for Kineto).
type CorrKey struct {
	Scope int32
	Corr  int64
}

// CorrIndex finds API calls by (CorrScope, Correlation). It is a sorted
// slice rather than a map: correlation ids grow with time, so lookups in
// time order mostly hit the entry after the previous one.
type CorrIndex struct {
	keys []corrEntry
	last int
}

type corrEntry struct {
	key CorrKey
	idx int32
}

func keyLess(a, b CorrKey) bool {
	if a.Scope != b.Scope {
		return a.Scope < b.Scope
	}
	return a.Corr < b.Corr
}

// IndexAPI indexes every call of t that keep accepts and that has a
// correlation id.
func IndexAPI(t *model.Trace, keep func(*model.APICall) bool) *CorrIndex {
	n := 0
	for i := range t.APICalls {
		if c := &t.APICalls[i]; c.Correlation != 0 && keep(c) {
			n++
		}
	}
	x := &CorrIndex{keys: make([]corrEntry, 0, n)}
	sorted := true
	for i := range t.APICalls {
		c := &t.APICalls[i]
		if c.Correlation == 0 || !keep(c) {
			continue
		}
		k := CorrKey{c.CorrScope, c.Correlation}
		if n := len(x.keys); n > 0 && !keyLess(x.keys[n-1].key, k) {
			sorted = false
		}
		x.keys = append(x.keys, corrEntry{k, int32(i)})
	}
	if !sorted {
		sort.SliceStable(x.keys, func(i, j int) bool { return keyLess(x.keys[i].key, x.keys[j].key) })
	}
	return x
}

// Len returns the number of indexed calls.
func (x *CorrIndex) Len() int { return len(x.keys) }

// Lookup returns the index in t.APICalls of the call with key k, or -1.
// With duplicate keys it returns the first.
func (x *CorrIndex) Lookup(k CorrKey) int32 {
	n := len(x.keys)
	if n == 0 || k.Corr == 0 {
		return -1
	}
	if j := x.last + 1; j < n && x.keys[j].key == k && x.keys[j-1].key != k {
		x.last = j
		return x.keys[j].idx
	}
	i := sort.Search(n, func(i int) bool { return !keyLess(x.keys[i].key, k) })
	if i < n && x.keys[i].key == k {
		x.last = i
		return x.keys[i].idx
	}
	return -1
}

// ThreadLabel names a thread as "pid/tid name" (name omitted when unknown).
func ThreadLabel(t *model.Trace, id model.ThreadID) string {
	th := t.Thread(id)
	if th.Name == "" {
		return fmt.Sprintf("%d/%d", th.PID, th.TID)
	}
	return fmt.Sprintf("%d/%d %s", th.PID, th.TID, th.Name)
}

// TID returns the OS thread id of id, or -1 for NoThread.
func TID(t *model.Trace, id model.ThreadID) int64 {
	if id == model.NoThread {
		return -1
	}
	return t.Thread(id).TID
}

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

// AllProcesses is the GPUs key used when device activity cannot be tied to
// processes (Kineto: one process per trace, correlation scope 0).
const AllProcesses int64 = -1

// GPUView is the GPU activity of one process (or of the whole trace).
type GPUView struct {
	Devices []model.DeviceID
	// Span runs from the first activity start to the last activity end.
	Span model.Interval
	// Busy is the union of kernels and memory operations.
	Busy []model.Interval
	// Idle is Span minus Busy.
	Idle []model.Interval
}

// GPUs is the GPU activity of a trace grouped by the process that issued it.
type GPUs struct {
	byPID map[int64]*GPUView
	// Scoped reports whether activity was grouped by process (Nsight Systems
	// correlation scopes); otherwise every process sees the whole trace's GPUs.
	Scoped bool
}

// NewGPUs groups kernels and memory operations by process, using CorrScope
// when it names a process of the trace, and otherwise treats the trace's
// GPUs as shared by all of its processes. A process's GPUs are idle when
// none of them runs a kernel or a copy.
func NewGPUs(t *model.Trace) *GPUs {
	pids := map[int64]bool{}
	for _, p := range t.Processes {
		pids[p.PID] = true
	}
	for _, th := range t.Threads {
		pids[th.PID] = true
	}
	scoped := false
	for i := range t.Kernels {
		if s := t.Kernels[i].CorrScope; s != 0 && pids[int64(s)] {
			scoped = true
			break
		}
	}
	g := &GPUs{byPID: map[int64]*GPUView{}, Scoped: scoped}
	type acc struct {
		ivs  []model.Interval
		devs []model.DeviceID
	}
	accs := map[int64]*acc{}
	var last *acc
	lastKey := int64(-2)
	add := func(scope int32, dev model.DeviceID, s, e model.Time) {
		key := AllProcesses
		if scoped {
			key = int64(scope)
		}
		a := last
		if key != lastKey {
			a = accs[key]
			if a == nil {
				a = &acc{}
				if !scoped {
					a.ivs = make([]model.Interval, 0, len(t.Kernels)+len(t.MemOps))
				}
				accs[key] = a
			}
			last, lastKey = a, key
		}
		a.ivs = append(a.ivs, model.Interval{Start: s, End: e})
		if n := len(a.devs); n == 0 || a.devs[n-1] != dev {
			if !slices.Contains(a.devs, dev) {
				a.devs = append(a.devs, dev)
			}
		}
	}
	for i := range t.Kernels {
		k := &t.Kernels[i]
		add(k.CorrScope, k.Device, k.Start, k.End)
	}
	for i := range t.MemOps {
		m := &t.MemOps[i]
		add(m.CorrScope, m.Device, m.Start, m.End)
	}
	for pid, a := range accs {
		v := &GPUView{Devices: a.devs}
		slices.Sort(v.Devices)
		v.Busy = detectors.UnionInPlace(a.ivs)
		if len(v.Busy) > 0 {
			v.Span = model.Interval{Start: v.Busy[0].Start, End: v.Busy[len(v.Busy)-1].End}
			// Span minus Busy: the gaps between consecutive busy intervals.
			v.Idle = make([]model.Interval, 0, len(v.Busy)-1)
			for i := 1; i < len(v.Busy); i++ {
				v.Idle = append(v.Idle, model.Interval{Start: v.Busy[i-1].End, End: v.Busy[i].Start})
			}
		}
		g.byPID[pid] = v
	}
	return g
}

// MergeSorted merges two lists sorted by start into a new sorted list.
func MergeSorted(a, b []model.Interval) []model.Interval {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := make([]model.Interval, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if b[j].Start < a[i].Start {
			out = append(out, b[j])
			j++
		} else {
			out = append(out, a[i])
			i++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// For returns the GPU view of process pid, or nil when it ran nothing on a GPU.
func (g *GPUs) For(pid int64) *GPUView {
	if !g.Scoped {
		pid = AllProcesses
	}
	v := g.byPID[pid]
	if v == nil || len(v.Busy) == 0 {
		return nil
	}
	return v
}

// Empty reports whether the trace has no GPU activity at all.
func (g *GPUs) Empty() bool { return len(g.byPID) == 0 }

// FirstDevice returns the first device of v, or NoDevice.
func (v *GPUView) FirstDevice() model.DeviceID {
	if v == nil || len(v.Devices) == 0 {
		return model.NoDevice
	}
	return v.Devices[0]
}

// Parents returns, for every range of t, the index of the innermost range of
// one of kinds on the same CPU thread that encloses it (-1 for none, and for
// ranges not of kinds or not on a thread).
func Parents(t *model.Trace, kinds ...model.RangeKind) []int32 {
	var want [16]bool
	for _, k := range kinds {
		if int(k) < len(want) {
			want[k] = true
		}
	}
	parent := make([]int32, len(t.Ranges))
	stacks := map[model.ThreadID][]int32{}
	for i := range t.Ranges {
		parent[i] = -1
		r := &t.Ranges[i]
		if r.Thread == model.NoThread || int(r.Kind) >= len(want) || !want[r.Kind] {
			continue
		}
		st := stacks[r.Thread]
		for len(st) > 0 && t.Ranges[st[len(st)-1]].End <= r.Start && t.Ranges[st[len(st)-1]].End < r.End {
			st = st[:len(st)-1]
		}
		for j := len(st) - 1; j >= 0; j-- {
			if p := &t.Ranges[st[j]]; p.Start <= r.Start && p.End >= r.End {
				parent[i] = st[j]
				break
			}
		}
		stacks[r.Thread] = append(st, int32(i))
	}
	return parent
}
