package detectors

import (
	"slices"

	"github.com/tracedx/tracedx/model"
)

// SubmitsWork reports whether an API call of class c can put work on a GPU
// (and so be the launch of an activity). Other calls with correlation ids
// (event queries, stream waits) never match an activity.
func SubmitsWork(c model.APIClass) bool {
	switch c {
	case model.APILaunch, model.APIGraphLaunch, model.APIMemcpy, model.APIMemset, model.APIOther:
		return true
	}
	return false
}

// NewLaunches indexes the calls of t that can submit GPU work, so that each
// activity finds its launch call by (CorrScope, Correlation).
func NewLaunches(t *model.Trace) *CorrIndex {
	return IndexAPI(t, func(c *model.APICall) bool { return SubmitsWork(t.CallClass(c)) })
}

// FeedGap is one stretch in which none of the activities of a Feed ran.
type FeedGap struct {
	model.Interval
	// Queued is the number of activities submitted but not started when the
	// GPU went idle: their launch call had returned (the work was in the
	// GPU's queue) and they had not started. 0 means the GPU starved: the
	// host had not finished submitting the next work. A launch call still in
	// progress does not count: its work is not runnable yet.
	Queued int32
	// Fed is when the first work was submitted during a gap that began
	// starved (Queued 0): from then on the GPU had runnable work and waited
	// for something else (an event, another stream). End when nothing was
	// submitted before the gap ended.
	Fed model.Time
}

// Feed says how a set of GPU activities (one device, or every device of
// one process) was fed with work: its busy time, its idle gaps, and its
// launch queue.
//
// The queue depth statistics follow HTA's queue length: an activity joins
// the queue when the API call that submitted it starts and leaves it when the
// activity starts. Whether a gap began with an empty queue is judged from
// submitted work only (see FeedGap.Queued), so that the launch latency of
// the very launch that ends the gap does not hide a starved GPU. Activities
// without a linked call (or whose call starts after them, a clock mismatch)
// are never queued.
type Feed struct {
	Span model.Interval
	Busy model.Duration
	Gaps []FeedGap
	// Activities is the number of activities, Linked how many of them have
	// their submitting call in the capture.
	Activities, Linked int
	// QueueMax is the deepest the queue got; QueueMean its mean over the
	// span, weighted by time; QueueSampleMean its mean over the queue's
	// change points, as HTA's queue_length_summary reports it.
	QueueMax        int
	QueueMean       float64
	QueueSampleMean float64
	// QueueEmpty is how long within the span the queue was empty.
	QueueEmpty model.Duration

	// The queue's changes: when the linked activities' launch calls started
	// and when the activities started, read from the activities (feedTimes).
	times *feedTimes
}

// eachQueueChange calls fn for every change of the launch queue in time
// order: -1 when a queued activity starts, +1 when a launch call starts;
// starts come before launches at the same instant.
func (f *Feed) eachQueueChange(fn func(at model.Time, d int)) {
	if f.times == nil {
		return
	}
	st, ln := f.times.cursor(timeStart), f.times.cursor(timeLaunch)
	for {
		s, sok := st.peek()
		l, lok := ln.peek()
		switch {
		case sok && (!lok || s <= l):
			fn(s, -1)
			st.pop()
		case lok:
			fn(l, +1)
			ln.pop()
		default:
			return
		}
	}
}

// NewFeed computes the feed of the activities of lists taken together, each
// list start-ordered (one device's, as DeviceActivities returns them).
func NewFeed(t *model.Trace, lists ...ActList) Feed {
	return newFeed(t, lists, nil, nil)
}

// NewFeedGaps is NewFeed that hands each gap to gap, in time order, instead
// of keeping it in Gaps: on captures of millions of short gaps that list is
// the largest part of a feed.
func NewFeedGaps(t *model.Trace, gap func(FeedGap), lists ...ActList) Feed {
	return newFeed(t, lists, nil, gap)
}

// newFeed is NewFeed over the activities keep accepts (nil: all); with a
// non-nil gap, NewFeedGaps.
func newFeed(t *model.Trace, lists []ActList, keep func(*Activity) bool, gap func(FeedGap)) Feed {
	var f Feed
	ft := &feedTimes{t: t, lists: lists, keep: keep}
	f.Activities, f.Linked = ft.scan()
	if f.Activities == 0 {
		return f
	}
	f.times = ft
	if gap == nil {
		gap = func(g FeedGap) { f.Gaps = append(f.Gaps, g) }
	}
	f.sweep(gap)
	f.queueStats()
	return f
}

// sweep computes the busy union and the gaps.
func (f *Feed) sweep(gap func(FeedGap)) {
	first := true
	var end, busyStart model.Time
	// Gaps come in time order and end only grows: the submitted and started
	// counts at a gap's start are counted on from the previous gap's.
	sub, st := f.times.cursor(timeSubmit), f.times.cursor(timeStart)
	launched, started := 0, 0
	eachMerged(f.times.lists, f.times.keep, func(a *Activity) {
		if first {
			first = false
			f.Span = model.Interval{Start: a.Start, End: a.End}
			end, busyStart = a.End, a.Start
			return
		}
		if a.Start > end {
			f.Busy += model.Duration(end - busyStart)
			g := FeedGap{Interval: model.Interval{Start: end, End: a.Start}}
			if f.Linked > 0 {
				launched += sub.countTo(end)
				started += st.countTo(end)
				g.Queued = int32(max(0, launched-started))
				g.Fed = g.End
				if next, ok := sub.peek(); ok {
					g.Fed = min(g.End, next)
				}
			}
			gap(g)
			busyStart = a.Start
		}
		end = max(end, a.End)
	})
	f.Busy += model.Duration(end - busyStart)
	f.Span.End = end
}

// queueStats computes the queue depth statistics over the span.
func (f *Feed) queueStats() {
	depth, last := 0, f.Span.Start
	var area, samples float64
	f.eachQueueChange(func(at model.Time, d int) {
		at = min(max(at, f.Span.Start), f.Span.End)
		if at > last {
			area += float64(depth) * float64(at-last)
			if depth == 0 {
				f.QueueEmpty += model.Duration(at - last)
			}
			last = at
		}
		depth += d
		f.QueueMax = max(f.QueueMax, depth)
		samples += float64(depth)
	})
	if f.Span.End > last {
		if depth == 0 {
			f.QueueEmpty += model.Duration(f.Span.End - last)
		}
		area += float64(depth) * float64(f.Span.End-last)
	}
	if n := f.Span.Len(); n > 0 {
		f.QueueMean = area / float64(n)
	}
	if n := 2 * f.Linked; n > 0 { // one launch and one start per linked activity
		f.QueueSampleMean = samples / float64(n)
	}
}

// QueueMeans returns the time-weighted mean queue depth in each of the
// sorted, disjoint windows ws.
func (f *Feed) QueueMeans(ws []model.Interval) []float64 {
	out := make([]float64, len(ws))
	depth, last, w := 0, model.Time(0), 0
	if f.Linked > 0 { // the first change: the earliest launch or start
		l, _ := f.times.cursor(timeLaunch).peek()
		s, _ := f.times.cursor(timeStart).peek()
		last = min(l, s)
	}
	// add credits depth over [last, to) to the windows it overlaps.
	add := func(to model.Time) {
		for w < len(ws) && ws[w].End <= last {
			w++
		}
		for k := w; k < len(ws) && ws[k].Start < to; k++ {
			if s, e := max(last, ws[k].Start), min(to, ws[k].End); e > s {
				out[k] += float64(depth) * float64(e-s)
			}
		}
	}
	f.eachQueueChange(func(at model.Time, d int) {
		if at > last {
			add(at)
			last = at
		}
		depth += d
	})
	for k, iv := range ws {
		if n := iv.Len(); n > 0 {
			out[k] /= float64(n)
		}
	}
	return out
}

// SubmittedEarly reports whether work submitted (its launch call returned)
// at sub was queued before gap was half over. The GPU then waited for
// something else — an event, another stream, a graph dependency — not for
// the host: kernel-gap calls such a gap dependency-wait, and the idle index
// counts the gap as starved only up to sub. A submission in the second half
// is the late launch that ends the gap.
func SubmittedEarly(gap model.Interval, sub model.Time) bool {
	return sub <= gap.Start+model.Time(gap.Len()/2)
}

// starved returns the stretch of g in which the GPU starved, if any.
func (g FeedGap) starved() (model.Interval, bool) {
	if g.Queued != 0 {
		return model.Interval{}, false
	}
	iv := g.Interval
	// Only the time before an early submission counts: from there the
	// queued work waited on something else.
	if g.Fed > iv.Start && SubmittedEarly(iv, g.Fed) {
		iv.End = g.Fed
	}
	return iv, true
}

// IdleIndex answers "how long was the GPU idle with an empty launch queue
// during [s, e)" for the process that blocked. On Nsight Systems captures the
// GPU work is grouped by the process that submitted it (its correlation
// scope); otherwise (Kineto: one process per trace) all GPU work counts.
// Only the span of that work counts: before its first activity and after
// its last there is nothing to starve.
type IdleIndex struct {
	scoped  bool
	starved map[int64][]model.Interval
	// Measurable is false when the capture has no launch calls to link, so
	// that an empty queue cannot be told from an unknown one.
	Measurable bool
}

// AllScopes is the IdleIndex key when GPU work is not grouped by process.
const AllScopes int64 = -1

// NewIdleIndex returns the index of t. It is computed once per trace and
// shared (see shared.go): callers must not modify it.
func NewIdleIndex(t *model.Trace) *IdleIndex {
	ids, by := DeviceActivities(t)
	e := sharedFor(t)
	e.idleOnce.Do(func() { e.idle = newIdleIndex(t, ids, by) })
	return e.idle
}

func newIdleIndex(t *model.Trace, ids []model.DeviceID, by map[model.DeviceID]ActList) *IdleIndex {
	x := &IdleIndex{starved: map[int64][]model.Interval{}, scoped: scopedByProcess(t)}
	lists := make([]ActList, 0, len(ids))
	for _, id := range ids {
		lists = append(lists, by[id])
	}
	// Only the starved stretches are kept, not the gaps or the queue.
	add := func(k int64, lists []ActList, keep func(*Activity) bool) {
		var starved []model.Interval
		f := newFeed(t, lists, keep, func(g FeedGap) {
			if iv, ok := g.starved(); ok {
				starved = append(starved, iv)
			}
		})
		if f.Linked > 0 {
			x.Measurable = true
		}
		x.starved[k] = slices.Clone(starved) // without the append slack
	}
	if !x.scoped {
		add(AllScopes, lists, nil)
		return x
	}
	// One feed per process, over the lists of the devices it used.
	scopeDevs := map[int32][]int{}
	for li, l := range lists {
		seen := map[int32]bool{}
		prev := int32(0)
		for i := range l.Len() {
			s := l.At(i).CorrScope
			if (i == 0 || s != prev) && !seen[s] {
				seen[s] = true
				scopeDevs[s] = append(scopeDevs[s], li)
			}
			prev = s
		}
	}
	for s, lis := range scopeDevs {
		mine := make([]ActList, 0, len(lis))
		for _, li := range lis {
			mine = append(mine, lists[li])
		}
		add(int64(s), mine, func(a *Activity) bool { return a.CorrScope == s })
	}
	return x
}

// scopedByProcess reports whether GPU activity names its process through
// its correlation scope (Nsight Systems).
func scopedByProcess(t *model.Trace) bool {
	pids := map[int64]bool{}
	for _, p := range t.Processes {
		pids[p.PID] = true
	}
	for _, th := range t.Threads {
		pids[th.PID] = true
	}
	for i := range t.Kernels {
		if s := t.Kernels[i].CorrScope; s != 0 && pids[int64(s)] {
			return true
		}
	}
	return false
}

// GPUIdle returns how long the GPUs of process pid were idle with an empty
// launch queue during [s, e).
func (x *IdleIndex) GPUIdle(pid int64, s, e model.Time) model.Duration {
	if !x.scoped {
		pid = AllScopes
	}
	return Overlap(x.starved[pid], s, e)
}
