package kernelgap

import (
	"fmt"
	"sort"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

const (
	// quietLimit: a launching thread that goes this long without any CUDA
	// call inside a gap was not busy launching.
	quietLimit = model.Millisecond
	// longLaunch: a launch call this long is not launch overhead but
	// first-launch work (lazy module loading).
	longLaunch = model.Millisecond
	// syncSlack: a blocking call that returns this close before a gap still
	// drained the queue into it.
	syncSlack = 20 * model.Microsecond
)

// hostIndex answers "what was the host doing during this window".
type hostIndex struct {
	t         *model.Trace
	hasHost   bool
	calls     map[model.ThreadID][]int32 // every API call per thread, start order
	blocking  map[model.ThreadID][]int32 // sync, memcpy and memset calls
	comm      []model.Interval           // host-side collective spans (any thread)
	gil       map[model.ThreadID][]model.Interval
	classes   map[model.ThreadID]*[3][]model.Interval // data-loading, jit, lazy-init unions
	named     map[model.ThreadID]*[3][]namedIv        // the same, one item per range or call
	pidCalls  map[int64][]model.Interval              // union of API calls per process, made on first use (callUnion)
	pidRanges map[int64][]model.Interval              // union of host ranges per process
	uvm       map[model.DeviceID][]model.Interval     // unified-memory migrations per device
	devLaunch map[model.DeviceID]model.ThreadID
	outside   model.Duration
}

func newHostIndex(t *model.Trace, outsideMin model.Duration) *hostIndex {
	h := &hostIndex{t: t, hasHost: len(t.APICalls) > 0, outside: outsideMin,
		calls: map[model.ThreadID][]int32{}, blocking: map[model.ThreadID][]int32{}, gil: map[model.ThreadID][]model.Interval{},
		classes: map[model.ThreadID]*[3][]model.Interval{}, named: map[model.ThreadID]*[3][]namedIv{}, pidCalls: map[int64][]model.Interval{}, pidRanges: map[int64][]model.Interval{},
		uvm: map[model.DeviceID][]model.Interval{}, devLaunch: map[model.DeviceID]model.ThreadID{}}
	nameClass := map[model.StringID]model.HostClass{}
	classOf := func(id model.StringID) model.HostClass {
		c, ok := nameClass[id]
		if !ok {
			c = model.ClassifyHostName(t.Str(id))
			nameClass[id] = c
		}
		return c
	}
	h.indexCalls(classOf)
	var comm []model.Interval
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Kind == model.RangeGPUAnnotation || r.Kind == model.RangeMark || r.Thread == model.NoThread {
			continue
		}
		iv := model.Interval{Start: r.Start, End: r.End}
		pid := t.Thread(r.Thread).PID
		h.pidRanges[pid] = append(h.pidRanges[pid], iv)
		if model.IsCommRangeName(t.Str(r.Name)) {
			comm = append(comm, iv)
		}
		if c := classOf(r.Name); c != model.HostOther {
			h.addClass(r.Thread, c, iv, r.Name)
		}
	}
	for i := range t.Collectives {
		c := &t.Collectives[i]
		if c.Source == model.CollFromCPU {
			comm = append(comm, model.Interval{Start: c.Start, End: c.End})
		}
	}
	h.comm = detectors.Union(comm)
	for i := range t.GIL {
		g := &t.GIL[i]
		if g.State == model.GILWaiting {
			h.gil[g.Thread] = append(h.gil[g.Thread], model.Interval{Start: g.Start, End: g.End})
		}
	}
	for i := range t.MemOps {
		m := &t.MemOps[i]
		if m.Kind == model.MemUVM {
			h.uvm[m.Device] = append(h.uvm[m.Device], model.Interval{Start: m.Start, End: m.End})
		}
	}
	for k, v := range h.gil {
		h.gil[k] = detectors.Union(v)
	}
	for k, v := range h.uvm {
		h.uvm[k] = detectors.Union(v)
	}
	for k, v := range h.pidRanges {
		h.pidRanges[k] = detectors.Union(v)
	}
	for _, cl := range h.classes {
		for i := range cl {
			cl[i] = detectors.Union(cl[i])
		}
	}
	for _, nl := range h.named {
		for i := range nl {
			sort.SliceStable(nl[i], func(a, b int) bool { return nl[i][a].Start < nl[i][b].Start })
		}
	}
	h.mainLaunchers()
	return h
}

// indexCalls files every API call per thread and per process, the blocking
// ones, and the ones whose name (or length, for launches) says jit, lazy
// init or data loading.
func (h *hostIndex) indexCalls(classOf func(model.StringID) model.HostClass) {
	t := h.t
	for i := range t.APICalls {
		a := &t.APICalls[i]
		h.calls[a.Thread] = append(h.calls[a.Thread], int32(i))
		iv := model.Interval{Start: a.Start, End: a.End}
		switch t.CallClass(a) {
		case model.APISync, model.APIMemcpy, model.APIMemset:
			h.blocking[a.Thread] = append(h.blocking[a.Thread], int32(i))
		case model.APILaunch:
			if iv.Len() >= longLaunch {
				h.addClass(a.Thread, model.HostLazyInit, iv, t.CallName(a))
			}
			continue
		}
		if c := classOf(t.CallName(a)); c != model.HostOther {
			h.addClass(a.Thread, c, iv, t.CallName(a))
		}
	}
}

// callUnion returns the union of the API calls of process pid. Only gaps
// with long quiet stretches ask for it, and it holds an interval per call
// (32 MB on a capture of 2 M launches): it is made on first use.
func (h *hostIndex) callUnion(pid int64) []model.Interval {
	if u, ok := h.pidCalls[pid]; ok {
		return u
	}
	var u []model.Interval
	t := h.t
	for i := range t.APICalls {
		if a := &t.APICalls[i]; t.Thread(a.Thread).PID == pid {
			u = detectors.AddToUnion(u, model.Interval{Start: a.Start, End: a.End}) // calls are in start order
		}
	}
	h.pidCalls[pid] = u
	return u
}

// namedIv is a range or call of a host class, with its name.
type namedIv struct {
	model.Interval
	name model.StringID
}

func (h *hostIndex) addClass(th model.ThreadID, c model.HostClass, iv model.Interval, name model.StringID) {
	cl := h.classes[th]
	if cl == nil {
		cl = &[3][]model.Interval{}
		h.classes[th] = cl
		h.named[th] = &[3][]namedIv{}
	}
	cl[c-1] = append(cl[c-1], iv)
	h.named[th][c-1] = append(h.named[th][c-1], namedIv{iv, name})
}

// className names the range or call of class c on th that covers the most
// of iv (for the evidence of a jit-compile, lazy-init or data-loading gap).
func (h *hostIndex) className(th model.ThreadID, c model.HostClass, iv model.Interval) string {
	nl := h.named[th]
	if nl == nil {
		return ""
	}
	list := nl[c-1]
	j := sort.Search(len(list), func(i int) bool { return list[i].Start >= iv.End })
	best, bestCover := -1, model.Duration(0)
	for k := j - 1; k >= 0 && k >= j-256; k-- {
		if cv := (model.Interval{Start: max(list[k].Start, iv.Start), End: min(list[k].End, iv.End)}).Len(); cv > bestCover {
			best, bestCover = k, cv
		}
	}
	if best < 0 {
		return ""
	}
	return fmt.Sprintf("%s covers %s of it", shortName(h.t.Str(list[best].name)), bestCover)
}

// mainLaunchers finds the main launcher of each device: the thread with the
// most linked launches, counted over an even sample of at most 20k kernels.
func (h *hostIndex) mainLaunchers() {
	t := h.t
	counts := map[model.DeviceID]map[model.ThreadID]int{}
	stride := int32(max(1, len(t.Kernels)/20000))
	ids, by := detectors.DeviceActivities(t)
	for _, dev := range ids {
		for i := range by[dev].Len() {
			// every stride-th row of t.Kernels
			if k := by[dev].At(i); k.IsKernel && k.Index%stride == 0 && k.Launch >= 0 {
				m := counts[dev]
				if m == nil {
					m = map[model.ThreadID]int{}
					counts[dev] = m
				}
				m[t.APICalls[k.Launch].Thread]++
			}
		}
	}
	for dev, m := range counts {
		best, bestN := model.NoThread, -1
		for th, n := range m {
			if n > bestN || (n == bestN && th < best) {
				best, bestN = th, n
			}
		}
		h.devLaunch[dev] = best
	}
}

func (h *hostIndex) mainLauncher(dev model.DeviceID) model.ThreadID {
	if th, ok := h.devLaunch[dev]; ok {
		return th
	}
	return model.NoThread
}

// blockingCall finds the sync or memcpy call on th that covers most of iv,
// and whether it is a drain: a call that was running when the gap opened and
// returned inside it (the host was blocked while the queue drained). Async
// copies that cover less than half of iv do not block.
func (h *hostIndex) blockingCall(th model.ThreadID, iv model.Interval) (idx int32, cover model.Duration, drain bool, ok bool) {
	list := h.blocking[th]
	if len(list) == 0 {
		return 0, 0, false, false
	}
	t := h.t
	j := sort.Search(len(list), func(i int) bool { return t.APICalls[list[i]].Start >= iv.End })
	best := int32(-1)
	var bestCover model.Duration = -1
	for k := j - 1; k >= 0 && k >= j-64; k-- {
		a := &t.APICalls[list[k]]
		if a.End < iv.Start-model.Time(syncSlack) {
			continue
		}
		c := model.Interval{Start: max(a.Start, iv.Start), End: min(a.End, iv.End)}.Len()
		d := a.Start <= iv.Start+model.Time(syncSlack) && a.End <= iv.End
		if c == 0 && !d {
			continue
		}
		if (t.CallClass(a) == model.APIMemcpy || t.CallClass(a) == model.APIMemset) && !model.IsSyncMemcpyAPI(t.Str(t.CallName(a))) && c < iv.Len()/2 {
			continue
		}
		if c > bestCover {
			best, bestCover, drain = list[k], c, d
		}
	}
	return best, bestCover, drain, best >= 0
}

// quietest returns the longest stretch of [s, e) in which th made no API
// call.
func (h *hostIndex) quietest(th model.ThreadID, s, e model.Time) model.Interval {
	list := h.calls[th]
	t := h.t
	j := sort.Search(len(list), func(i int) bool { return t.APICalls[list[i]].Start >= s })
	cur := s
	// A call that started before s may still be running.
	for k := j - 1; k >= 0 && k >= j-8; k-- {
		if end := t.APICalls[list[k]].End; end > cur {
			cur = end
		}
	}
	best := model.Interval{Start: s, End: s}
	for ; j < len(list) && cur < e; j++ {
		a := &t.APICalls[list[j]]
		if a.Start >= e {
			break
		}
		if a.Start > cur && a.Start-cur > best.End-best.Start {
			best = model.Interval{Start: cur, End: a.Start}
		}
		if a.End > cur {
			cur = a.End
		}
	}
	if cur < e && e-cur > best.End-best.Start {
		best = model.Interval{Start: cur, End: e}
	}
	if best.End < best.Start {
		best.End = best.Start
	}
	return best
}
