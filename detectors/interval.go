package detectors

import (
	"cmp"
	"slices"
	"sort"

	"github.com/tracedx/tracedx/model"
)

// Union returns the union of ivs as disjoint, sorted intervals (empty
// intervals dropped; touching intervals merge) in new storage. It sorts ivs
// in place when ivs is not sorted by start already.
func Union(ivs []model.Interval) []model.Interval {
	sortByStart(ivs)
	return merge(ivs, make([]model.Interval, 0, len(ivs)/2+1))
}

// UnionInPlace is Union for large lists: the result is built in ivs's own
// storage, so it aliases (and the call overwrites) ivs.
func UnionInPlace(ivs []model.Interval) []model.Interval {
	sortByStart(ivs)
	return merge(ivs, ivs[:0])
}

func sortByStart(ivs []model.Interval) {
	byStart := func(a, b model.Interval) int { return cmp.Compare(a.Start, b.Start) }
	if !slices.IsSortedFunc(ivs, byStart) {
		slices.SortFunc(ivs, byStart)
	}
}

// merge appends the union of the start-sorted ivs to out (which may alias ivs).
func merge(ivs, out []model.Interval) []model.Interval {
	for _, iv := range ivs {
		out = AddToUnion(out, iv)
	}
	return out
}

// AddToUnion adds iv to u, the union of intervals that all started no later
// than iv: u stays a union without ever holding the intervals themselves (a
// union of millions of calls in start order, in the space of its result).
func AddToUnion(u []model.Interval, iv model.Interval) []model.Interval {
	if iv.End <= iv.Start {
		return u
	}
	if n := len(u); n > 0 && iv.Start <= u[n-1].End {
		if iv.End > u[n-1].End {
			u[n-1].End = iv.End
		}
		return u
	}
	return append(u, iv)
}

// Total returns the summed length of disjoint intervals.
func Total(ivs []model.Interval) model.Duration {
	var d model.Duration
	for _, iv := range ivs {
		d += iv.Len()
	}
	return d
}

// Intersect returns the intersection of two sorted disjoint interval lists.
func Intersect(a, b []model.Interval) []model.Interval {
	var out []model.Interval
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		s := max(a[i].Start, b[j].Start)
		e := min(a[i].End, b[j].End)
		if s < e {
			out = append(out, model.Interval{Start: s, End: e})
		}
		if a[i].End < b[j].End {
			i++
		} else {
			j++
		}
	}
	return out
}

// Subtract returns a minus b for sorted disjoint interval lists.
func Subtract(a, b []model.Interval) []model.Interval {
	var out []model.Interval
	j := 0
	for _, iv := range a {
		cur := iv
		for j < len(b) && b[j].End <= cur.Start {
			j++
		}
		k := j
		for k < len(b) && b[k].Start < cur.End {
			if b[k].Start > cur.Start {
				out = append(out, model.Interval{Start: cur.Start, End: b[k].Start})
			}
			if b[k].End >= cur.End {
				cur.Start = cur.End
				break
			}
			cur.Start = b[k].End
			k++
		}
		if cur.Start < cur.End {
			out = append(out, cur)
		}
	}
	return out
}

// Gaps returns the gaps between consecutive intervals of a sorted disjoint
// list that are longer than minLen.
func Gaps(union []model.Interval, minLen model.Duration) []model.Interval {
	var out []model.Interval
	for i := 1; i < len(union); i++ {
		g := model.Interval{Start: union[i-1].End, End: union[i].Start}
		if g.Len() > minLen {
			out = append(out, g)
		}
	}
	return out
}

// Overlap returns how much of [s,e) the sorted disjoint list ivs covers.
func Overlap(ivs []model.Interval, s, e model.Time) model.Duration {
	i := sort.Search(len(ivs), func(i int) bool { return ivs[i].End > s })
	var d model.Duration
	for ; i < len(ivs) && ivs[i].Start < e; i++ {
		d += model.Interval{Start: max(s, ivs[i].Start), End: min(e, ivs[i].End)}.Len()
	}
	return d
}
