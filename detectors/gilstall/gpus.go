package gilstall

import (
	"slices"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// allProcesses is the gpuSet key used when device activity cannot be tied to
// processes (Kineto: one process per trace, correlation scope 0).
const allProcesses int64 = -1

// gpuView is the GPU activity of one process (or of the whole trace).
type gpuView struct {
	Devices []model.DeviceID
	// Span runs from the first activity start to the last activity end.
	Span model.Interval
	// Busy is the union of kernels and memory operations.
	Busy []model.Interval
	// Idle is Span minus Busy.
	Idle []model.Interval
}

// gpuSet is the GPU activity of a trace grouped by the process that issued it.
type gpuSet struct {
	byPID map[int64]*gpuView
	// Scoped reports whether activity was grouped by process (Nsight Systems
	// correlation scopes); otherwise every process sees the whole trace's GPUs.
	Scoped bool
}

// newGPUs groups kernels and memory operations by process, using CorrScope
// when it names a process of the trace, and otherwise treats the trace's
// GPUs as shared by all of its processes. A process's GPUs are idle when
// none of them runs a kernel or a copy.
func newGPUs(t *model.Trace) *gpuSet {
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
	g := &gpuSet{byPID: map[int64]*gpuView{}, Scoped: scoped}
	type acc struct {
		ivs  []model.Interval
		devs []model.DeviceID
	}
	accs := map[int64]*acc{}
	var last *acc
	lastKey := int64(-2)
	add := func(scope int32, dev model.DeviceID, s, e model.Time) {
		key := allProcesses
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
		v := &gpuView{Devices: a.devs}
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

// mergeSorted merges two lists sorted by start into a new sorted list.
func mergeSorted(a, b []model.Interval) []model.Interval {
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
func (g *gpuSet) For(pid int64) *gpuView {
	if !g.Scoped {
		pid = allProcesses
	}
	v := g.byPID[pid]
	if v == nil || len(v.Busy) == 0 {
		return nil
	}
	return v
}

// Empty reports whether the trace has no GPU activity at all.
func (g *gpuSet) Empty() bool { return len(g.byPID) == 0 }

// FirstDevice returns the first device of v, or NoDevice.
func (v *gpuView) FirstDevice() model.DeviceID {
	if v == nil || len(v.Devices) == 0 {
		return model.NoDevice
	}
	return v.Devices[0]
}

// starve narrows every view's idle time to the stretches in which the GPU
// had nothing queued (a GIL wait while launched work is pending costs
// nothing) and that come before the workload's end (teardown), when the
// capture links launches to GPU work.
func (g *gpuSet) starve(bi *detectors.BlockIdle) {
	if !bi.Measurable() {
		return
	}
	for pid, v := range g.byPID {
		v.Idle = detectors.Intersect(v.Idle, bi.Starved(pid))
	}
}
