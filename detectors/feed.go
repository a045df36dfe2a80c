package detectors

import (
	"slices"
	"sort"

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
	return IndexAPI(t, func(c *model.APICall) bool { return SubmitsWork(c.Class) })
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

	queue []queueEvent // sorted by time
}

// queueEvent is a change of the launch queue: +1 when a launch call starts,
// -1 when its activity starts.
type queueEvent struct {
	at model.Time
	d  int32
}

// NewFeed computes the feed of acts (start-ordered, as Activities returns
// them). ln links them to their launch calls; nil means no links.
func NewFeed(t *model.Trace, acts []Activity, ln *CorrIndex) Feed {
	var f Feed
	f.Activities = len(acts)
	if len(acts) == 0 {
		return f
	}
	var evs []queueEvent
	submitAt := make([]model.Time, 0, len(acts))
	startAt := make([]model.Time, 0, len(acts))
	if ln != nil && len(t.APICalls) > 0 {
		evs = make([]queueEvent, 0, 2*len(acts))
		for i := range acts {
			a := &acts[i]
			ai := ln.Lookup(CorrKey{Scope: a.CorrScope, Corr: a.Correlation})
			if ai < 0 || t.APICalls[ai].Start > a.Start {
				continue
			}
			f.Linked++
			c := &t.APICalls[ai]
			evs = append(evs, queueEvent{c.Start, +1}, queueEvent{a.Start, -1})
			submitAt = append(submitAt, min(c.End, a.Start))
			startAt = append(startAt, a.Start)
		}
		slices.SortFunc(evs, func(a, b queueEvent) int {
			if a.at != b.at {
				if a.at < b.at {
					return -1
				}
				return 1
			}
			return int(a.d - b.d) // starts before launches at the same instant
		})
		slices.Sort(submitAt)
		// startAt follows acts, which are start-ordered.
	}
	// Busy union and gaps.
	f.Span = model.Interval{Start: acts[0].Start, End: acts[0].End}
	end := acts[0].End
	busyStart := acts[0].Start
	for i := 1; i < len(acts); i++ {
		a := &acts[i]
		if a.Start > end {
			f.Busy += model.Duration(end - busyStart)
			g := FeedGap{Interval: model.Interval{Start: end, End: a.Start}}
			if len(submitAt) > 0 {
				launched := sort.Search(len(submitAt), func(i int) bool { return submitAt[i] > end })
				started := sort.Search(len(startAt), func(i int) bool { return startAt[i] > end })
				g.Queued = int32(max(0, launched-started))
				g.Fed = g.End
				if launched < len(submitAt) {
					g.Fed = min(g.End, submitAt[launched])
				}
			}
			f.Gaps = append(f.Gaps, g)
			busyStart = a.Start
		}
		end = max(end, a.End)
	}
	f.Busy += model.Duration(end - busyStart)
	f.Span.End = end
	// Queue depth over the span.
	depth, last := 0, f.Span.Start
	var area float64
	var samples float64
	for _, e := range evs {
		at := min(max(e.at, f.Span.Start), f.Span.End)
		if at > last {
			area += float64(depth) * float64(at-last)
			if depth == 0 {
				f.QueueEmpty += model.Duration(at - last)
			}
			last = at
		}
		depth += int(e.d)
		f.QueueMax = max(f.QueueMax, depth)
		samples += float64(depth)
	}
	if f.Span.End > last {
		if depth == 0 {
			f.QueueEmpty += model.Duration(f.Span.End - last)
		}
		area += float64(depth) * float64(f.Span.End-last)
	}
	if n := f.Span.Len(); n > 0 {
		f.QueueMean = area / float64(n)
	}
	if len(evs) > 0 {
		f.QueueSampleMean = samples / float64(len(evs))
	}
	f.queue = evs
	return f
}

// QueueMeans returns the time-weighted mean queue depth in each of the
// sorted, disjoint windows ws.
func (f *Feed) QueueMeans(ws []model.Interval) []float64 {
	out := make([]float64, len(ws))
	depth, last, w := 0, model.Time(0), 0
	if len(f.queue) > 0 {
		last = f.queue[0].at
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
	for _, e := range f.queue {
		if e.at > last {
			add(e.at)
			last = e.at
		}
		depth += int(e.d)
	}
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

// Starved returns the gaps in which the GPU went idle with an empty launch
// queue, as a sorted disjoint list: time the host, not the GPU, held up.
func (f *Feed) Starved() []model.Interval {
	var out []model.Interval
	for _, g := range f.Gaps {
		if g.Queued != 0 {
			continue
		}
		iv := g.Interval
		// Only the time before an early submission counts: from there the
		// queued work waited on something else.
		if g.Fed > iv.Start && SubmittedEarly(iv, g.Fed) {
			iv.End = g.Fed
		}
		out = append(out, iv)
	}
	return out
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

// NewIdleIndex builds the index for t.
func NewIdleIndex(t *model.Trace) *IdleIndex {
	acts := Activities(t)
	x := &IdleIndex{starved: map[int64][]model.Interval{}, scoped: scopedByProcess(t)}
	ln := NewLaunches(t)
	groups := map[int64][]Activity{}
	if !x.scoped {
		groups[AllScopes] = acts
	} else {
		for _, a := range acts {
			groups[int64(a.CorrScope)] = append(groups[int64(a.CorrScope)], a)
		}
	}
	for k, g := range groups {
		f := NewFeed(t, g, ln)
		if f.Linked > 0 {
			x.Measurable = true
		}
		x.starved[k] = f.Starved()
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
