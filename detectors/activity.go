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
func Activities(t *model.Trace) []Activity {
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
func ByDevice(acts []Activity) ([]model.DeviceID, map[model.DeviceID][]Activity) {
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
	for _, a := range acts {
		by[a.Device] = append(by[a.Device], a)
	}
	ids := make([]model.DeviceID, 0, len(by))
	for id := range by {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
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
