package detectors

import (
	"fmt"

	"github.com/tracedx/tracedx/model"
)

// BlockIdle weighs the windows in which a host thread was blocked (in a
// synchronize, a synchronous copy, a GIL wait) by what they cost the GPU:
// the time its device was idle with an empty launch queue during the block.
// A block while the GPU stays busy with queued work costs nothing.
type BlockIdle struct {
	t   *model.Trace
	idx *IdleIndex
	// End is where the workload ends: the end of the last profiler step
	// when the capture marks steps, else the end of the last GPU activity.
	// Blocks that start at or after it are teardown.
	End model.Time
}

// NewBlockIdle indexes t.
func NewBlockIdle(t *model.Trace) *BlockIdle {
	b := &BlockIdle{t: t, idx: NewIdleIndex(t)}
	var last model.Time
	for i := range t.Kernels {
		last = max(last, t.Kernels[i].End)
	}
	for i := range t.MemOps {
		last = max(last, t.MemOps[i].End)
	}
	b.End = last
	var stepEnd model.Time
	for i := range t.Ranges {
		if r := &t.Ranges[i]; r.Kind == model.RangeStep && r.Thread != model.NoThread {
			stepEnd = max(stepEnd, r.End)
		}
	}
	if stepEnd > 0 {
		b.End = stepEnd
	}
	if last == 0 {
		b.End = model.Time(1<<63 - 1) // no GPU work: nothing is teardown
	}
	return b
}

// Measurable reports whether the capture links launches to GPU work, so
// that an empty queue can be told from an unknown one.
func (b *BlockIdle) Measurable() bool { return b.idx.Measurable }

// Teardown reports whether a block starting at s comes after the workload.
func (b *BlockIdle) Teardown(s model.Time) bool { return s >= b.End }

// Idle returns the GPU idle time with an empty queue during [s, e) for the
// process of thread th.
func (b *BlockIdle) Idle(th model.ThreadID, s, e model.Time) model.Duration {
	return b.idx.GPUIdle(b.pid(th), s, e)
}

// pid is the process of thread th, or AllScopes for no thread.
func (b *BlockIdle) pid(th model.ThreadID) int64 {
	if th == model.NoThread {
		return AllScopes
	}
	return b.t.Thread(th).PID
}

// Total returns the GPU idle time during the union of the blocks, per
// process (blocks of two threads of one process at once count once).
func (b *BlockIdle) Total(blocks map[model.ThreadID][]model.Interval) model.Duration {
	byPID := map[int64][]model.Interval{}
	for th, ivs := range blocks {
		pid := b.pid(th)
		byPID[pid] = append(byPID[pid], ivs...)
	}
	var d model.Duration
	for pid, ivs := range byPID {
		for _, iv := range Union(ivs) {
			d += b.idx.GPUIdle(pid, iv.Start, iv.End)
		}
	}
	return d
}

// Cap lowers a host-blocking finding's severity to info when the GPU was
// idle with an empty queue for less than warnPct of the window during the
// blocks, and returns the sentence that says so ("" when it stays).
func (b *BlockIdle) Cap(sev model.Severity, idle, blocked, window model.Duration, warnPct float64) (model.Severity, string) {
	if !b.Measurable() || sev == model.SevInfo {
		return sev, ""
	}
	share := Pct(float64(idle), float64(window))
	if share >= warnPct {
		return sev, fmt.Sprintf(" The GPU sat idle with nothing queued for %s of the blocked time (%s%% of the window).", idle, FormatFloat(share))
	}
	return model.SevInfo, fmt.Sprintf(" The GPU was busy, or had work queued that waited on another stream or event, for most of it: it was idle with nothing queued for only %s of the %s blocked (%s%% of the window, below %s%%), so this block did not starve the GPU (kernel-gap names what the queued work waited for); reported as info.",
		idle, blocked, FormatFloat(share), FormatFloat(warnPct))
}

// Starved returns the stretches before the workload's end in which the GPUs
// of process pid were idle with an empty launch queue (sorted, disjoint).
func (b *BlockIdle) Starved(pid int64) []model.Interval {
	if !b.idx.scoped {
		pid = AllScopes
	}
	return Intersect(b.idx.starved[pid], []model.Interval{{Start: 0, End: b.End}})
}
