package detectors

import (
	"slices"

	"github.com/tracedx/tracedx/model"
)

// actCursor yields the activities of lists (each start-ordered) that keep
// accepts (nil: all), merged in the order Activity.before gives: the feed
// of a process that drives several devices, with no merged copy.
type actCursor struct {
	lists []ActList
	keep  func(*Activity) bool
	pos   []int
	// head is each list's next kept activity, valid where has is set.
	head []Activity
	has  []bool
	cur  Activity
}

func newActCursor(lists []ActList, keep func(*Activity) bool) actCursor {
	c := actCursor{lists: lists, keep: keep, pos: make([]int, len(lists))}
	if len(lists) > 1 {
		c.head, c.has = make([]Activity, len(lists)), make([]bool, len(lists))
	}
	return c
}

// next returns the next activity, nil at the end. It points into the
// cursor, valid until the next call.
func (c *actCursor) next() *Activity {
	if len(c.lists) == 1 {
		l := c.lists[0]
		for c.pos[0] < l.Len() {
			c.cur = l.At(c.pos[0])
			c.pos[0]++
			if c.keep == nil || c.keep(&c.cur) {
				return &c.cur
			}
		}
		return nil
	}
	best := -1
	for k, l := range c.lists {
		for !c.has[k] && c.pos[k] < l.Len() {
			c.head[k] = l.At(c.pos[k])
			c.pos[k]++
			c.has[k] = c.keep == nil || c.keep(&c.head[k])
		}
		if c.has[k] && (best < 0 || c.head[k].before(&c.head[best])) {
			best = k
		}
	}
	if best < 0 {
		return nil
	}
	c.cur, c.has[best] = c.head[best], false
	return &c.cur
}

// eachMerged calls fn on the activities of lists that keep accepts, merged
// (see actCursor).
func eachMerged(lists []ActList, keep func(*Activity) bool, fn func(*Activity)) {
	c := newActCursor(lists, keep)
	for a := c.next(); a != nil; a = c.next() {
		fn(a)
	}
}

// The queue times of a feed: for each linked activity, when its launch call
// started, when its work was submitted (the call returned, or the activity
// started if that came first) and when it started.
const (
	timeLaunch = iota
	timeSubmit
	timeStart
	nTimes
)

// linkedCall returns the call that submitted a, nil when the capture has
// none or it starts after a (a clock mismatch): such an activity is never
// queued.
func linkedCall(t *model.Trace, a *Activity) *model.APICall {
	if a.Launch < 0 || int(a.Launch) >= len(t.APICalls) {
		return nil
	}
	if c := &t.APICalls[a.Launch]; c.Start <= a.Start {
		return c
	}
	return nil
}

func queueTime(kind int, a *Activity, c *model.APICall) model.Time {
	switch kind {
	case timeLaunch:
		return c.Start
	case timeSubmit:
		return min(c.End, a.Start)
	}
	return a.Start
}

// feedTimes holds a feed's queue times without a list of them: each kind
// is read in ascending order from the activities themselves, where the
// values already ascend (those not below the running maximum, in activity
// order), merged with the few that do not, kept sorted in late. Launches
// mostly come in the order their work starts, so late is small (empty
// when every activity of a device is submitted in order), where sorted
// copies of every time took 24 bytes per activity.
type feedTimes struct {
	t     *model.Trace
	lists []ActList
	keep  func(*Activity) bool
	late  [nTimes][]model.Time
}

// scan reads every activity once: the counts of activities and linked ones,
// and the late times of each kind.
func (ft *feedTimes) scan() (activities, linked int) {
	var top [nTimes]model.Time
	eachMerged(ft.lists, ft.keep, func(a *Activity) {
		activities++
		c := linkedCall(ft.t, a)
		if c == nil {
			return
		}
		for k := range nTimes {
			v := queueTime(k, a, c)
			switch {
			case linked == 0 || v >= top[k]:
				top[k] = v
			default:
				ft.late[k] = append(ft.late[k], v)
			}
		}
		linked++
	})
	for k := range nTimes {
		ft.late[k] = slices.Clip(ft.late[k])
		slices.Sort(ft.late[k])
	}
	return activities, linked
}

// cursor returns a reader of the times of kind in ascending order.
func (ft *feedTimes) cursor(kind int) *timeCursor {
	return &timeCursor{ft: ft, kind: kind, acts: newActCursor(ft.lists, ft.keep)}
}

// timeCursor reads one kind of queue time in ascending order (feedTimes).
type timeCursor struct {
	ft   *feedTimes
	kind int
	acts actCursor
	// top is the running maximum of the ascending run; run its next value
	// (valid when hasRun), done when the activities are exhausted.
	top, run     model.Time
	seen, hasRun bool
	done         bool
	li           int // next late value
}

// fill reads the activities up to the run's next value.
func (c *timeCursor) fill() {
	for !c.hasRun && !c.done {
		a := c.acts.next()
		if a == nil {
			c.done = true
			return
		}
		call := linkedCall(c.ft.t, a)
		if call == nil {
			continue
		}
		if v := queueTime(c.kind, a, call); !c.seen || v >= c.top {
			c.seen, c.top, c.run, c.hasRun = true, v, v, true
		}
	}
}

// fromRun reports whether the next time is the run's (else the next late
// one), after fill.
func (c *timeCursor) fromRun() bool {
	late := c.ft.late[c.kind]
	return c.hasRun && (c.li >= len(late) || c.run <= late[c.li])
}

// peek returns the next time, false at the end.
func (c *timeCursor) peek() (model.Time, bool) {
	c.fill()
	switch {
	case c.fromRun():
		return c.run, true
	case c.li < len(c.ft.late[c.kind]):
		return c.ft.late[c.kind][c.li], true
	}
	return 0, false
}

// pop drops the time peek returned.
func (c *timeCursor) pop() {
	if c.fromRun() {
		c.hasRun = false
		return
	}
	c.li++
}

// countTo drops the times up to at and returns how many it dropped.
func (c *timeCursor) countTo(at model.Time) int {
	n := 0
	for v, ok := c.peek(); ok && v <= at; v, ok = c.peek() {
		c.pop()
		n++
	}
	return n
}
