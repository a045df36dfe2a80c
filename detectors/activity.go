package detectors

import (
	"sort"

	"github.com/tracedx/tracedx/model"
)

// Activity is one GPU activity (a kernel or a memory operation) with its
// class and its link to the launching call: what the passes over every
// activity read; the rest is in its row of the trace (Index). It is a value
// made on demand by ActList.At: the lists hold 4 bytes per activity.
type Activity struct {
	Start, End model.Time
	// Launch indexes t.APICalls: the call that submitted the activity (the
	// call that SubmitsWork with the same correlation scope and id), -1
	// when the capture has none.
	Launch int32
	// Index is the activity's row in t.Kernels (IsKernel) or t.MemOps.
	Index     int32
	CorrScope int32
	Class     model.KernelClass
	IsKernel  bool
}

// Name returns the activity's name in t.
func (a *Activity) Name(t *model.Trace) model.StringID {
	if a.IsKernel {
		return t.Kernels[a.Index].Name
	}
	return t.MemOps[a.Index].Name
}

// before orders activities as DeviceActivities merges them: by start,
// kernels before memory operations at the same instant, then by table row.
func (a *Activity) before(b *Activity) bool {
	if a.Start != b.Start {
		return a.Start < b.Start
	}
	if a.IsKernel != b.IsKernel {
		return a.IsKernel
	}
	return a.Index < b.Index
}

// memRef marks a reference to a row of t.MemOps in ActList.refs.
const memRef = 1 << 31

// activityRows is what the lists of a trace share: the launch call of
// every kernel and memory operation, and the class of every kernel.
type activityRows struct {
	t                     *model.Trace
	kernLaunch, memLaunch []int32
	classes               []model.KernelClass
}

// ActList is one device's GPU activities in start order (kernels first on
// equal starts, then by table row): references to the rows of t.Kernels and
// t.MemOps, 4 bytes each, read as Activity values by At. On a capture of
// millions of kernels a list of Activity rows was 61 MB.
type ActList struct {
	rows *activityRows
	// refs are the rows, memRef set for memory operations; nil with n > 0
	// means every kernel of the trace in table order (one device, no
	// memory operations: no list at all).
	refs []uint32
	n    int
}

// Len returns the number of activities.
func (l ActList) Len() int { return l.n }

// At returns the i-th activity.
func (l ActList) At(i int) Activity {
	r := uint32(i)
	if l.refs != nil {
		r = l.refs[i]
	}
	x := l.rows
	if r&memRef != 0 {
		j := int32(r &^ memRef)
		m := &x.t.MemOps[j]
		return Activity{Start: m.Start, End: m.End, Launch: x.memLaunch[j], Index: j, CorrScope: m.CorrScope, Class: model.KernelMemory}
	}
	k := &x.t.Kernels[r]
	return Activity{Start: k.Start, End: k.End, Launch: x.kernLaunch[r], Index: int32(r), CorrScope: k.CorrScope,
		Class: x.classes[r], IsKernel: true}
}

// Filter returns the activities of l that keep accepts, in l's order.
func (l ActList) Filter(keep func(*Activity) bool) ActList {
	out := ActList{rows: l.rows, refs: make([]uint32, 0, l.n)}
	for i := range l.n {
		if a := l.At(i); keep(&a) {
			ref := uint32(a.Index)
			if !a.IsKernel {
				ref |= memRef
			}
			out.refs = append(out.refs, ref)
		}
	}
	out.n = len(out.refs)
	return out
}

// DeviceActivities returns t's kernels and memory operations per device,
// each device's list in start order (kernels first on equal starts),
// classified by model.ClassifyKernel and linked to their launch calls, and
// the device IDs in ascending order. Both tables are sorted by Finalize, so
// this is a merge, not a sort.
//
// The lists are computed once per trace and shared (see shared.go): callers
// must not modify the map. Feeds over several devices merge the lists on the
// fly (NewFeed) instead of copying.
func DeviceActivities(t *model.Trace) ([]model.DeviceID, map[model.DeviceID]ActList) {
	e := sharedFor(t)
	e.once.Do(func() { e.ids, e.by = deviceActivities(t) })
	return e.ids, e.by
}

func deviceActivities(t *model.Trace) ([]model.DeviceID, map[model.DeviceID]ActList) {
	counts := map[model.DeviceID]int{}
	for i := range t.Kernels {
		counts[t.Kernels[i].Device]++
	}
	for i := range t.MemOps {
		counts[t.MemOps[i].Device]++
	}
	ids := make([]model.DeviceID, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	rows := &activityRows{t: t, kernLaunch: make([]int32, len(t.Kernels)), memLaunch: make([]int32, len(t.MemOps)),
		classes: KernelClasses(t)}
	ln := NewLaunches(t)
	launch := func(scope int32, corr int64) int32 {
		if corr == 0 {
			return -1
		}
		return ln.Lookup(CorrKey{Scope: scope, Corr: corr})
	}
	for i := range t.Kernels {
		rows.kernLaunch[i] = launch(t.Kernels[i].CorrScope, t.Kernels[i].Correlation)
	}
	for j := range t.MemOps {
		rows.memLaunch[j] = launch(t.MemOps[j].CorrScope, t.MemOps[j].Correlation)
	}
	by := make(map[model.DeviceID]ActList, len(ids))
	if len(ids) == 1 && len(t.MemOps) == 0 {
		by[ids[0]] = ActList{rows: rows, n: len(t.Kernels)}
		return ids, by
	}
	// Count first and carve the lists out of one array: appending per
	// device would copy each list log2(n) times and leave up to twice its
	// size as slack.
	all := make([]uint32, len(t.Kernels)+len(t.MemOps))
	off := 0
	for _, id := range ids {
		n := counts[id]
		by[id] = ActList{rows: rows, refs: all[off : off : off+n]}
		off += n
	}
	add := func(dev model.DeviceID, ref uint32) {
		l := by[dev]
		l.refs = append(l.refs, ref)
		l.n++
		by[dev] = l
	}
	i, j := 0, 0
	for i < len(t.Kernels) || j < len(t.MemOps) {
		if j >= len(t.MemOps) || (i < len(t.Kernels) && t.Kernels[i].Start <= t.MemOps[j].Start) {
			add(t.Kernels[i].Device, uint32(i))
			i++
		} else {
			add(t.MemOps[j].Device, uint32(j)|memRef)
			j++
		}
	}
	return ids, by
}

// KernelClasses returns the class of every kernel of t by
// model.ClassifyKernel. It is computed once per trace and shared (see
// shared.go) with the activity lists: callers must not modify it.
func KernelClasses(t *model.Trace) []model.KernelClass {
	e := sharedFor(t)
	e.classOnce.Do(func() { e.classes = kernelClasses(t) })
	return e.classes
}

// kernelClasses classifies every kernel of t, caching by name.
func kernelClasses(t *model.Trace) []model.KernelClass {
	cache := map[model.StringID]model.KernelClass{}
	out := make([]model.KernelClass, len(t.Kernels))
	for i := range t.Kernels {
		id := t.Kernels[i].Name
		c, ok := cache[id]
		if !ok {
			c = model.ClassifyKernel(t.Str(id))
			cache[id] = c
		}
		out[i] = c
	}
	return out
}
