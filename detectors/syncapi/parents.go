package syncapi

import "github.com/tracedx/tracedx/model"

// Parents returns, for every range of t, the index of the innermost range of
// one of kinds on the same CPU thread that encloses it (-1 for none, and for
// ranges not of kinds or not on a thread).
func Parents(t *model.Trace, kinds ...model.RangeKind) []int32 {
	var want [16]bool
	for _, k := range kinds {
		if int(k) < len(want) {
			want[k] = true
		}
	}
	parent := make([]int32, len(t.Ranges))
	stacks := map[model.ThreadID][]int32{}
	for i := range t.Ranges {
		parent[i] = -1
		r := &t.Ranges[i]
		if r.Thread == model.NoThread || int(r.Kind) >= len(want) || !want[r.Kind] {
			continue
		}
		st := stacks[r.Thread]
		for len(st) > 0 && t.Ranges[st[len(st)-1]].End <= r.Start && t.Ranges[st[len(st)-1]].End < r.End {
			st = st[:len(st)-1]
		}
		for j := len(st) - 1; j >= 0; j-- {
			if p := &t.Ranges[st[j]]; p.Start <= r.Start && p.End >= r.End {
				parent[i] = st[j]
				break
			}
		}
		stacks[r.Thread] = append(st, int32(i))
	}
	return parent
}
