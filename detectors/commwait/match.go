package commwait

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// overlapSlack is how far apart (after clock alignment) the intervals of one
// matched collective may lie and still count as the same operation: a
// collective ends at about the same moment on every rank, so the aligned
// intervals of a true match overlap.
const overlapSlack = 5 * model.Microsecond

// matchKey identifies a stream of collectives every rank runs in the same
// order: process group, operation and message size (-1 when not recorded).
type matchKey struct {
	group string
	op    model.CollOp
	bytes int64
}

// Matching is the result of matching collectives across the ranks of a set.
type Matching struct {
	// By says how collectives were paired: "sequence number", "position
	// within the step" or "order" (within the group, op and size), joined by
	// " / " when streams differ.
	By string
	// Matches holds one entry per trustworthy match: ops[r] is trace r's
	// collective. Ordered by aligned start.
	Matches [][]commOp
	// Rejected counts candidate matches whose aligned intervals did not
	// overlap (the pairing was wrong, or a rank missed a collective).
	Rejected int
	// Unpaired counts collectives with no counterpart on some rank.
	Unpaired int
	// Offsets[r] is subtracted from trace r's times to put it on trace 0's clock.
	Offsets []model.Duration
	// Mismatched lists (group, op, size) streams whose counts differ by rank.
	Mismatched []string
}

// Match pairs the collectives of the set's traces across ranks. Pairing:
// by sequence number when every collective of a stream carries one, else by
// position within the profiler step (when every rank has steps), else by
// order within the stream. Clocks are aligned per rank on the median
// difference of matched end times (a collective ends at about the same moment
// on every rank); candidate matches whose aligned intervals do not overlap
// are rejected, and the offsets re-estimated from the kept ones. Ranks split
// from one capture file share its clock and are not aligned.
func Match(traces []*model.Trace) *Matching {
	m := &Matching{Offsets: make([]model.Duration, len(traces))}
	perRank := make([]map[matchKey][]commOp, len(traces))
	useSteps := true
	noSeq := map[matchKey]bool{} // streams where some collective has no sequence number
	starts := make([][]model.Time, len(traces))
	names := make([][]string, len(traces))
	for r, t := range traces {
		perRank[r] = map[matchKey][]commOp{}
		for _, o := range commOps(t) {
			k := matchKey{o.Group, o.Op, o.Bytes}
			perRank[r][k] = append(perRank[r][k], o)
			if o.Seq < 0 {
				noSeq[k] = true
			}
		}
		starts[r], names[r] = stepRanges(t)
		if len(starts[r]) < 2 {
			useSteps = false
		}
	}
	used := map[string]bool{}
	cands := pairBy(m, perRank, func(r int, k matchKey, o commOp) string {
		switch {
		case !noSeq[k]:
			used["sequence number"] = true
			return fmt.Sprint("seq ", o.Seq)
		case useSteps:
			used["position within the step"] = true
			if i := stepOf(starts[r], o.Start); i >= 0 {
				return names[r][i]
			}
			return ""
		}
		used["order"] = true
		return ""
	})
	var by []string
	for _, b := range []string{"sequence number", "position within the step", "order"} {
		if used[b] {
			by = append(by, b)
		}
	}
	m.By = strings.Join(by, " / ")
	if len(cands) == 0 {
		return m
	}
	shared := sharedClock(traces)
	if !shared {
		m.Offsets = endOffsets(cands, len(traces))
	}
	var kept [][]commOp
	for _, c := range cands {
		if overlaps(c, m.Offsets) {
			kept = append(kept, c)
		} else {
			m.Rejected++
		}
	}
	if len(kept) > 0 && m.Rejected > 0 && !shared {
		m.Offsets = endOffsets(kept, len(traces))
	}
	sort.SliceStable(kept, func(i, j int) bool { return minStart(kept[i], m.Offsets) < minStart(kept[j], m.Offsets) })
	m.Matches = kept
	return m
}

// sharedClock says whether the traces are processes of one capture file
// (model.SplitRanks): one clock, nothing to align.
func sharedClock(traces []*model.Trace) bool {
	from := traces[0].Meta["split_from"]
	for _, t := range traces {
		if from == "" || t.Meta["split_from"] != from {
			return false
		}
	}
	return true
}

// pairBy pairs, per stream, the i-th collective of each bucket (named by
// bucket) across ranks; buckets or streams missing on a rank pair nothing.
func pairBy(m *Matching, perRank []map[matchKey][]commOp, bucket func(r int, k matchKey, o commOp) string) [][]commOp {
	keys := map[matchKey]bool{}
	for _, pr := range perRank {
		for k := range pr {
			keys[k] = true
		}
	}
	sorted := make([]matchKey, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.group != b.group {
			return a.group < b.group
		}
		if a.op != b.op {
			return a.op < b.op
		}
		return a.bytes < b.bytes
	})
	var out [][]commOp
	for _, k := range sorted {
		type slot struct {
			b string
			i int
		}
		idx := make([]map[slot]commOp, len(perRank))
		var order []slot
		counts := make([]int, len(perRank))
		for r, pr := range perRank {
			idx[r] = map[slot]commOp{}
			n := map[string]int{}
			for _, o := range pr[k] {
				b := bucket(r, k, o)
				s := slot{b, n[b]}
				n[b]++
				idx[r][s] = o
				if r == 0 {
					order = append(order, s)
				}
			}
			counts[r] = len(pr[k])
		}
		for r := 1; r < len(counts); r++ {
			if counts[r] != counts[0] {
				m.Mismatched = append(m.Mismatched, fmt.Sprintf("%s%s on group %q: %v", k.op, sizeText(k.bytes), k.group, counts))
				break
			}
		}
		paired := 0
		for _, s := range order {
			c := make([]commOp, len(perRank))
			ok := true
			for r := range perRank {
				o, found := idx[r][s]
				if !found {
					ok = false
					break
				}
				c[r] = o
			}
			if ok {
				out = append(out, c)
				paired++
			}
		}
		for _, n := range counts {
			m.Unpaired += n - paired
		}
	}
	return out
}

func sizeText(b int64) string {
	if b < 0 {
		return ""
	}
	return fmt.Sprintf(" of %d B", b)
}

// endOffsets returns, per rank, the median difference of matched end times
// against rank 0.
func endOffsets(ms [][]commOp, n int) []model.Duration {
	off := make([]model.Duration, n)
	for r := 1; r < n; r++ {
		d := make([]float64, len(ms))
		for i, c := range ms {
			d[i] = float64(c[r].End - c[0].End)
		}
		off[r] = model.Duration(median(d))
	}
	return off
}

// overlaps says whether a match's intervals, aligned, share a moment.
func overlaps(c []commOp, off []model.Duration) bool {
	latestStart, earliestEnd := model.Time(math.MinInt64), model.Time(math.MaxInt64)
	for r, o := range c {
		latestStart = max(latestStart, o.Start-model.Time(off[r]))
		earliestEnd = min(earliestEnd, o.End-model.Time(off[r]))
	}
	return latestStart <= earliestEnd+model.Time(overlapSlack)
}

func minStart(c []commOp, off []model.Duration) model.Time {
	s := model.Time(math.MaxInt64)
	for r, o := range c {
		s = min(s, o.Start-model.Time(off[r]))
	}
	return s
}

// stepRanges returns the starts and names of t's top-level step ranges on
// CPU threads, by start. Steps are matched across ranks by name
// (ProfilerStep#N): ranks' profilers may start at different steps.
func stepRanges(t *model.Trace) ([]model.Time, []string) {
	var idx []int
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Kind == model.RangeStep && r.Thread != model.NoThread && r.Depth == 0 {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return t.Ranges[idx[a]].Start < t.Ranges[idx[b]].Start })
	starts := make([]model.Time, len(idx))
	names := make([]string, len(idx))
	for k, i := range idx {
		starts[k], names[k] = t.Ranges[i].Start, t.Str(t.Ranges[i].Name)
	}
	return starts, names
}

// stepOf returns the index of the last step starting at or before at (-1 before the first).
func stepOf(steps []model.Time, at model.Time) int {
	return sort.Search(len(steps), func(i int) bool { return steps[i] > at }) - 1
}

// Lateness is what matched collectives say about each rank's arrival.
type Lateness struct {
	// Mean[r] is trace r's mean arrival lateness (aligned start minus the
	// earliest rank's) over the matches after the first.
	Mean []model.Duration
	// Last[r] counts the matches at which trace r arrived last.
	Last []int
	// WaitCaused[r] is the time the other ranks waited while r was last.
	WaitCaused []model.Duration
	// N is the number of matches counted (the first is excluded).
	N int
	// First is the arrival spread at the first matched collective after
	// profiler start, and FirstLast the trace that arrived last there.
	First     model.Duration
	FirstLast int
	// Spread[i] is the arrival spread of match i+1 (i.e. Matches[1:]).
	Spread []model.Duration
}

// Arrivals computes per-rank lateness. The first match is set apart: ranks
// start their profilers at different moments, so the first collective after
// profiler start measures start-up skew, not straggling.
func (m *Matching) Arrivals() Lateness {
	n := len(m.Offsets)
	l := Lateness{Mean: make([]model.Duration, n), Last: make([]int, n), WaitCaused: make([]model.Duration, n), FirstLast: -1}
	sum := make([]model.Duration, n)
	for i, c := range m.Matches {
		first, last, lastRank := model.Time(math.MaxInt64), model.Time(math.MinInt64), 0
		arr := make([]model.Time, n)
		for r, o := range c {
			arr[r] = o.Start - model.Time(m.Offsets[r])
			first = min(first, arr[r])
			if arr[r] > last {
				last, lastRank = arr[r], r
			}
		}
		if i == 0 {
			l.First, l.FirstLast = model.Duration(last-first), lastRank
			continue
		}
		l.N++
		l.Last[lastRank]++
		l.Spread = append(l.Spread, model.Duration(last-first))
		for r := range c {
			sum[r] += model.Duration(arr[r] - first)
			l.WaitCaused[lastRank] += model.Duration(last - arr[r])
		}
	}
	if l.N > 0 {
		for r := range sum {
			l.Mean[r] = model.Duration(int64(sum[r]) / int64(l.N))
		}
	}
	return l
}
