// Package gcbudget keeps the Go heap of one run near a memory budget.
//
// Go collects when the heap has grown to twice the live data (GOGC=100),
// so a run's peak memory is about twice its peak live heap. A soft memory
// limit (debug.SetMemoryLimit) makes the collector work earlier, but a
// limit below what the run really needs makes it collect back to back, at
// up to half the CPU, for no gain. Start sets the limit to a budget and,
// after every collection, raises it to the live heap plus a minimum
// headroom when the budget is too tight (and lowers it back when the live
// heap shrinks): memory stays at the budget while the live data leave room,
// and above it only by what the data need, never at the price of a
// collector that runs without pause.
package gcbudget

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// headroom is the least the heap may grow past the live heap before the
// next collection, as a fraction of the live heap (GOGC=100 allows 1).
const headroom = 0.15

// minHeadroom is the least headroom in bytes, for small heaps.
const minHeadroom = 32 << 20

// limit returns the soft limit for a budget and a live heap of live bytes,
// capped at ceiling (0: no cap).
func limit(budget, live, ceiling int64) int64 {
	need := live + max(int64(float64(live)*headroom), minHeadroom)
	l := max(budget, need)
	if ceiling > 0 {
		l = min(l, ceiling)
	}
	return l
}

type tuner struct {
	mu              sync.Mutex
	budget, ceiling int64
	max             int64
	over            func(live int64)
	prev            int64
	stopped         bool
	sample          []metrics.Sample
}

// Start sets the soft memory limit to budget (at most ceiling; 0 = none)
// and keeps adjusting it after each collection, as the package says. The
// returned stop puts back the limit that was in force before.
//
// max is a hard maximum (0: none): the first time a collection finds more
// than max bytes live, over is called with the live heap, from the
// runtime's finalizer goroutine, so that the run can stop with a clear
// error instead of being killed once the machine runs out.
func Start(budget, ceiling, max int64, over func(live int64)) (stop func()) {
	t := &tuner{budget: budget, ceiling: ceiling, max: max, over: over, prev: debug.SetMemoryLimit(-1),
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	t.adjust()
	t.arm()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if !t.stopped {
			t.stopped = true
			debug.SetMemoryLimit(t.prev)
		}
	}
}

// sentinel is the object whose finalizer runs after each collection; it
// holds a pointer so that it is never batched with other tiny objects.
type sentinel struct{ _ *int }

// arm sets up the next call of adjust, after the next collection.
func (t *tuner) arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		if t.adjust() {
			t.arm()
		}
	})
}

// adjust applies the limit for the current live heap; false once stopped.
func (t *tuner) adjust() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false
	}
	metrics.Read(t.sample)
	var live int64
	if v := t.sample[0].Value; v.Kind() == metrics.KindUint64 {
		live = int64(min(v.Uint64(), math.MaxInt64))
	}
	debug.SetMemoryLimit(limit(t.budget, live, t.ceiling))
	if t.max > 0 && live > t.max && t.over != nil {
		t.over(live)
		t.over = nil
	}
	return true
}
