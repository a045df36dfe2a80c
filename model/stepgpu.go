package model

import "sort"

type corrKey struct {
	scope int32
	corr  int64
}

// attachGPU fills the GPU fields of steps from the runtime calls made on
// each step's thread inside it and the activities correlated with them.
func attachGPU(t *Trace, steps []Step) {
	acts := map[corrKey][]Interval{}
	kernels := map[corrKey]int64{}
	for i := range t.Kernels {
		k := &t.Kernels[i]
		if k.Correlation != 0 {
			key := corrKey{k.CorrScope, k.Correlation}
			acts[key] = append(acts[key], k.Interval())
			kernels[key]++
		}
	}
	for i := range t.MemOps {
		m := &t.MemOps[i]
		if m.Correlation != 0 {
			key := corrKey{m.CorrScope, m.Correlation}
			acts[key] = append(acts[key], Interval{m.Start, m.End})
		}
	}
	if len(acts) == 0 {
		return
	}
	byThread := map[ThreadID][]int32{}
	for i := range t.APICalls {
		c := &t.APICalls[i]
		if c.Correlation != 0 || c.Class == APIGraphLaunch {
			byThread[c.Thread] = append(byThread[c.Thread], int32(i))
		}
	}
	for _, calls := range byThread {
		sort.SliceStable(calls, func(i, j int) bool { return t.APICalls[calls[i]].Start < t.APICalls[calls[j]].Start })
	}
	for si := range steps {
		s := &steps[si]
		s.Correlated = true
		calls := byThread[s.Thread]
		lo := sort.Search(len(calls), func(i int) bool { return t.APICalls[calls[i]].Start >= s.Start })
		var ivs []Interval
		for _, ci := range calls[lo:] {
			c := &t.APICalls[ci]
			if c.Start > s.End {
				break
			}
			if c.Class == APIGraphLaunch {
				s.GraphLaunches++
			}
			key := corrKey{c.CorrScope, c.Correlation}
			ivs = append(ivs, acts[key]...)
			s.Kernels += kernels[key]
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
