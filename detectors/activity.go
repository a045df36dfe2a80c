package detectors

import (
	"sort"

	"github.com/tracedx/tracedx/model"
)

// Activity is one GPU activity (a kernel or a memory operation) with its
// class and its link to the launching call.
type Activity struct {
	Start, End  model.Time
	Correlation int64
	Stream      model.StreamID
	Name        model.StringID
	Device      model.DeviceID
	CorrScope   int32
	Class       model.KernelClass
	IsKernel    bool
}

// Activities returns t's kernels and memory operations in start order
// (kernels first on equal starts), classified by model.ClassifyKernel. Both tables
// are sorted by Finalize, so this is a merge, not a sort.
//
// The list is computed once per trace and shared (see shared.go): callers
// must not modify it.
func Activities(t *model.Trace) []Activity {
	return sharedFor(t).activities(t)
}

func activities(t *model.Trace) []Activity {
	classes := KernelClasses(t)
	out := make([]Activity, 0, len(t.Kernels)+len(t.MemOps))
	i, j := 0, 0
	for i < len(t.Kernels) || j < len(t.MemOps) {
		if j >= len(t.MemOps) || (i < len(t.Kernels) && t.Kernels[i].Start <= t.MemOps[j].Start) {
			k := &t.Kernels[i]
			out = append(out, Activity{Start: k.Start, End: k.End, Correlation: k.Correlation, Stream: k.Stream, Name: k.Name,
				Device: k.Device, CorrScope: k.CorrScope, Class: classes[i], IsKernel: true})
			i++
		} else {
			m := &t.MemOps[j]
			out = append(out, Activity{Start: m.Start, End: m.End, Correlation: m.Correlation, Stream: m.Stream, Name: m.Name,
				Device: m.Device, CorrScope: m.CorrScope, Class: model.KernelMemory})
			j++
		}
	}
	return out
}

// ByDevice splits start-ordered activities per device (each list stays in
// start order) and returns the device IDs in ascending order.
// With one device (the common case) the input itself is returned, uncopied.
// For the list Activities returned, the split is computed once and shared:
// callers must not modify the lists or the map.
func ByDevice(acts []Activity) ([]model.DeviceID, map[model.DeviceID][]Activity) {
	if e := sharedOf(acts); e != nil {
		return e.byDevice(acts)
	}
	return byDevice(acts)
}

func byDevice(acts []Activity) ([]model.DeviceID, map[model.DeviceID][]Activity) {
	by := map[model.DeviceID][]Activity{}
	single := true
	for i := 1; i < len(acts) && single; i++ {
		single = acts[i].Device == acts[0].Device
	}
	if single {
		if len(acts) == 0 {
			return nil, by
		}
		by[acts[0].Device] = acts
		return []model.DeviceID{acts[0].Device}, by
	}
	// Count first and carve the lists out of one array: appending per
	// device would copy each list log2(n) times and leave up to twice its
	// size as slack (1.9 GB allocated for 2 M kernels on 2 devices).
	counts := map[model.DeviceID]int{}
	for i := range acts {
		counts[acts[i].Device]++
	}
	ids := make([]model.DeviceID, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	all := make([]Activity, len(acts))
	off := 0
	for _, id := range ids {
		n := counts[id]
		by[id] = all[off : off : off+n]
		off += n
	}
	for i := range acts {
		d := acts[i].Device
		by[d] = append(by[d], acts[i])
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
