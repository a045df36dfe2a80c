package model

import "sort"

type corrKey struct {
	scope int32
	corr  int64
}

// actRef is one GPU activity by the correlation of its launch.
type actRef struct {
	key    corrKey
	iv     Interval
	kernel bool
}

func keyLess(a, b corrKey) bool { return a.scope < b.scope || a.scope == b.scope && a.corr < b.corr }

// indexActs returns the kernels and copies of t that have a correlation,
// sorted by it (a sorted slice rather than a map: a few hundred thousand
// map entries with a slice each cost more than the rest of FindSteps).
func indexActs(t *Trace) []actRef {
	acts := make([]actRef, 0, len(t.Kernels)+len(t.MemOps))
	for i := range t.Kernels {
		if k := &t.Kernels[i]; k.Correlation != 0 {
			acts = append(acts, actRef{corrKey{k.CorrScope, k.Correlation}, k.Interval(), true})
		}
	}
	for i := range t.MemOps {
		if m := &t.MemOps[i]; m.Correlation != 0 {
			acts = append(acts, actRef{corrKey{m.CorrScope, m.Correlation}, Interval{m.Start, m.End}, false})
		}
	}
	if !sort.SliceIsSorted(acts, func(i, j int) bool { return keyLess(acts[i].key, acts[j].key) }) {
		sort.SliceStable(acts, func(i, j int) bool { return keyLess(acts[i].key, acts[j].key) })
	}
	return acts
}

// attachGPU fills the GPU fields of steps from the runtime calls made on
// each step's thread inside it and the activities correlated with them.
func attachGPU(t *Trace, steps []Step) {
	acts := indexActs(t)
	if len(acts) == 0 {
		return
	}
	byThread := map[ThreadID][]int32{}
	for i := range t.APICalls {
		c := &t.APICalls[i]
		if c.Correlation != 0 || t.CallClass(c) == APIGraphLaunch {
			byThread[c.Thread] = append(byThread[c.Thread], int32(i))
		}
	}
	for _, calls := range byThread {
		sort.SliceStable(calls, func(i, j int) bool { return t.APICalls[calls[i]].Start < t.APICalls[calls[j]].Start })
	}
	var ivs []Interval
	for si := range steps {
		s := &steps[si]
		s.Correlated = true
		calls := byThread[s.Thread]
		lo := sort.Search(len(calls), func(i int) bool { return t.APICalls[calls[i]].Start >= s.Start })
		ivs = ivs[:0]
		for _, ci := range calls[lo:] {
			c := &t.APICalls[ci]
			if c.Start > s.End {
				break
			}
			id := t.APIIdents.at(c.Ident)
			if id.Class == APIGraphLaunch {
				s.GraphLaunches++
			}
			key := corrKey{id.Scope, c.Correlation}
			for j := sort.Search(len(acts), func(i int) bool { return !keyLess(acts[i].key, key) }); j < len(acts) && acts[j].key == key; j++ {
				ivs = append(ivs, acts[j].iv)
				if acts[j].kernel {
					s.Kernels++
				}
			}
		}
		if len(ivs) == 0 {
			s.Idle = s.Window()
			continue
		}
		s.GPUStart, s.GPUEnd, s.Busy = unionSpan(ivs)
		s.Idle = max(0, s.Window()-s.Busy)
	}
}

// unionSpan sorts ivs and returns their first start, last end and the
// length of their union.
func unionSpan(ivs []Interval) (start, end Time, busy Duration) {
	sort.Slice(ivs, func(i, j int) bool { return ivs[i].Start < ivs[j].Start })
	start, end = ivs[0].Start, ivs[0].End
	cur := ivs[0]
	for _, iv := range ivs[1:] {
		if iv.Start > cur.End {
			busy += cur.Len()
			cur = iv
		} else if iv.End > cur.End {
			cur.End = iv.End
		}
		end = max(end, iv.End)
	}
	busy += cur.Len()
	return start, end, busy
}
