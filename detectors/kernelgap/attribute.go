package kernelgap

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// attribute sets g's cause from the host activity during it, trying the
// causes in precedence order (causes.go). next is the activity right after
// the gap.
func (h *hostIndex) attribute(g *Gap, dev model.DeviceID, next detectors.Activity, mainThread model.ThreadID) {
	g.Focus = g.Interval
	if !h.hasHost {
		g.Cause = CauseNotMeasurable
		return
	}
	t := h.t
	half := g.Len() / 2
	if ivs := h.uvm[dev]; len(ivs) > 0 && detectors.Overlap(ivs, g.Start, g.End) >= half {
		g.Cause = CauseUVM
		g.Detail = "unified-memory migrations during the gap"
		return
	}
	launch := next.Launch
	g.Launch = launch
	th := mainThread
	if launch >= 0 {
		th = t.APICalls[launch].Thread
	}
	g.Thread = th
	if half > 0 && detectors.Overlap(h.comm, g.Start, g.End) >= half {
		g.Cause = CauseComm
		g.Detail = "host inside a collective"
		return
	}
	if launch >= 0 && detectors.SubmittedEarly(g.Interval, t.APICalls[launch].End) {
		if a := &t.APICalls[launch]; t.CallClass(a) == model.APILaunch && a.End.Sub(a.Start) >= longLaunch && a.End > g.Start {
			// A launch call this long loaded the module (lazy loading);
			// the device then still had to set it up.
			g.Cause = CauseLazyInit
			g.Detail = fmt.Sprintf("first launch of %s: the %s call took %s (module loading); the kernel started %s after it returned",
				t.Str(next.Name(t)), t.Str(t.CallName(a)), a.End.Sub(a.Start), g.End.Sub(a.End))
			return
		}
		g.Cause = CauseDependency
		g.Detail = h.dependencyDetail(g, launch, next)
		return
	}
	if th == model.NoThread {
		g.Cause = CauseUnknown
		return
	}
	blk, cover, drain, blocked := h.blockingCall(th, g.Interval)
	if blocked && cover >= half {
		h.setBlocked(g, blk, "")
		return
	}
	if ivs := h.gil[th]; len(ivs) > 0 && detectors.Overlap(ivs, g.Start, g.End) >= half {
		g.Cause = CauseGIL
		g.Detail = "launching thread waited for the GIL"
		return
	}
	if c, hc, ok := h.hostClassCause(th, g.Interval); ok {
		g.Cause = c
		g.Detail = h.className(th, hc, g.Interval)
		return
	}
	h.hostSideCause(g, th, launch)
	if blocked && drain && g.Cause == CauseLaunch {
		// The sync drained the queue and the host then launched without
		// pause: the drain is what exposed the launch latency.
		a := &t.APICalls[blk]
		h.setBlocked(g, blk, fmt.Sprintf(" returned %s into the gap; the next work came %s later", max(0, a.End.Sub(g.Start)), g.End.Sub(max(a.End, g.Start))))
	} else if blocked && drain {
		g.Detail += fmt.Sprintf(" after %s returned", t.Str(t.CallName(&t.APICalls[blk])))
	}
}

// setBlocked gives g the sync-blocked or memcpy-blocked cause of call ai.
func (h *hostIndex) setBlocked(g *Gap, ai int32, extra string) {
	a := &h.t.APICalls[ai]
	g.Cause = CauseMemcpy
	if h.t.CallClass(a) == model.APISync {
		g.Cause = CauseSync
	}
	g.Detail = h.t.Str(h.t.CallName(a)) + extra
	g.Focus = model.Interval{Start: max(g.Start, a.Start), End: min(g.End, a.End)}
}

// hostClassCause tests the jit-compile, lazy-init and data-loading ranges and
// calls of th: the class covering the most of iv wins when it covers half.
func (h *hostIndex) hostClassCause(th model.ThreadID, iv model.Interval) (Cause, model.HostClass, bool) {
	cl := h.classes[th]
	if cl == nil {
		return 0, 0, false
	}
	best, bestCover := -1, model.Duration(0)
	// Order of the tie-break: jit, lazy-init, data-loading (precedence).
	for _, i := range []int{int(model.HostJIT) - 1, int(model.HostLazyInit) - 1, int(model.HostDataLoading) - 1} {
		if c := detectors.Overlap(cl[i], iv.Start, iv.End); c > bestCover {
			best, bestCover = i, c
		}
	}
	if best < 0 || bestCover < iv.Len()/2 {
		return 0, 0, false
	}
	hc := model.HostClass(best + 1)
	switch hc {
	case model.HostJIT:
		return CauseJIT, hc, true
	case model.HostLazyInit:
		return CauseLazyInit, hc, true
	}
	return CauseDataLoading, hc, true
}

// hostSideCause decides between launch-bound, host-compute and
// outside-workload from the longest stretch in which the launching thread
// made no CUDA call before the next launch.
func (h *hostIndex) hostSideCause(g *Gap, th model.ThreadID, launch int32) {
	t := h.t
	until := g.End
	if launch >= 0 && t.APICalls[launch].Start > g.Start && t.APICalls[launch].Start < g.End {
		until = t.APICalls[launch].Start
	}
	q := h.quietest(th, g.Start, until)
	if q.Len() < quietLimit {
		g.Cause = CauseLaunch
		if launch < 0 {
			g.Detail = "the launching thread kept making CUDA calls through the gap"
		}
		return
	}
	g.Focus = q
	pid := t.Thread(th).PID
	if q.Len() >= h.outside && detectors.Overlap(h.pidRanges[pid], q.Start, q.End) == 0 &&
		detectors.Overlap(h.callUnion(pid), q.Start, q.End) < q.Len()/100 {
		g.Cause = CauseOutside
		g.Detail = fmt.Sprintf("the process made no CUDA call for %s and no range covers it", q.Len())
		return
	}
	g.Cause = CauseHostCompute
	g.Detail = fmt.Sprintf("no CUDA call for %s", q.Len())
}

// dependencyDetail says when the next activity was launched and names the
// last stream/event wait the launching thread issued before it.
func (h *hostIndex) dependencyDetail(g *Gap, launch int32, next detectors.Activity) string {
	t := h.t
	a := &t.APICalls[launch]
	when := fmt.Sprintf("%s into the gap", a.End.Sub(g.Start))
	if a.End < g.Start {
		when = fmt.Sprintf("%s before the gap", g.Start.Sub(a.End))
	}
	s := fmt.Sprintf("%s was submitted %s (by %s) and started %s after the call returned: it waited for another stream, event or device", t.Str(next.Name(t)), when, t.Str(t.CallName(a)), g.End.Sub(a.End))
	if next.Class == model.KernelComm {
		s = fmt.Sprintf("collective %s was submitted %s and waited for its peers or inputs", t.Str(next.Name(t)), when)
	}
	list := h.calls[a.Thread]
	j := sort.Search(len(list), func(i int) bool { return t.APICalls[list[i]].Start > a.Start })
	for k := j - 1; k >= 0; k-- {
		c := &t.APICalls[list[k]]
		if a.Start.Sub(c.End) > 10*model.Millisecond {
			break
		}
		if n := t.Str(t.CallName(c)); strings.Contains(n, "StreamWaitEvent") || strings.Contains(n, "StreamWaitValue") {
			s += "; after " + n
			break
		}
	}
	return s
}
