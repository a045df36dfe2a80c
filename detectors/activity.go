package detectors

import (
	"sort"

	"github.com/tracedx/tracedx/model"
)

// Activity is one GPU activity (a kernel or a memory operation) with its
// class and its link to the launching call: 32 bytes, what the passes over
// every activity read; the rest is in its row of the trace (Index).
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

// before orders activities as Activities merges them: by start, kernels
// before memory operations at the same instant, then by table row.
func (a *Activity) before(b *Activity) bool {
	if a.Start != b.Start {
		return a.Start < b.Start
	}
	if a.IsKernel != b.IsKernel {
		return a.IsKernel
	}
	return a.Index < b.Index
}

// DeviceActivities returns t's kernels and memory operations per device,
// each device's list in start order (kernels first on equal starts),
// classified by model.ClassifyKernel and linked to their launch calls, and
// the device IDs in ascending order. Both tables are sorted by Finalize, so
// this is a merge, not a sort.
//
// The lists are computed once per trace and shared (see shared.go), carved
// out of one array: callers must not modify the lists or the map. Feeds over
// several devices merge the lists on the fly (NewFeed) instead of copying.
func DeviceActivities(t *model.Trace) ([]model.DeviceID, map[model.DeviceID][]Activity) {
	e := sharedFor(t)
	e.once.Do(func() { e.ids, e.by = deviceActivities(t) })
	return e.ids, e.by
}

func deviceActivities(t *model.Trace) ([]model.DeviceID, map[model.DeviceID][]Activity) {
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
	// Count first and carve the lists out of one array: appending per
	// device would copy each list log2(n) times and leave up to twice its
	// size as slack.
	by := make(map[model.DeviceID][]Activity, len(ids))
	all := make([]Activity, len(t.Kernels)+len(t.MemOps))
	off := 0
	for _, id := range ids {
		n := counts[id]
		by[id] = all[off : off : off+n]
		off += n
	}
	classes := KernelClasses(t)
	ln := NewLaunches(t)
	launch := func(scope int32, corr int64) int32 {
		if corr == 0 {
			return -1
		}
		return ln.Lookup(CorrKey{Scope: scope, Corr: corr})
	}
	i, j := 0, 0
	for i < len(t.Kernels) || j < len(t.MemOps) {
		if j >= len(t.MemOps) || (i < len(t.Kernels) && t.Kernels[i].Start <= t.MemOps[j].Start) {
			k := &t.Kernels[i]
			by[k.Device] = append(by[k.Device], Activity{Start: k.Start, End: k.End, Launch: launch(k.CorrScope, k.Correlation),
				Index: int32(i), CorrScope: k.CorrScope, Class: classes[i], IsKernel: true})
			i++
		} else {
			m := &t.MemOps[j]
			by[m.Device] = append(by[m.Device], Activity{Start: m.Start, End: m.End, Launch: launch(m.CorrScope, m.Correlation),
				Index: int32(j), CorrScope: m.CorrScope, Class: model.KernelMemory})
			j++
		}
	}
	return ids, by
}

// KernelClasses classifies every kernel of t by model.ClassifyKernel,
// caching by name.
func KernelClasses(t *model.Trace) []model.KernelClass {
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
