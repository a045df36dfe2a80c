package model

import (
	"fmt"
	"sort"
)

// SplitRanks splits a capture that holds several processes, each driving its
// own GPUs (one Nsight Systems export of a whole node: torchrun with one
// process per GPU), into one trace per process: the ranks of one job, each
// with its own devices, so that cross-rank rules run on them. Ranks follow
// the processes' lowest device; the world size is the number of such
// processes (inferred: the file may hold one node of a larger job). It
// returns nil when the trace is not such a capture: a known rank, fewer than
// two GPU processes, a GPU process without communication kernels (a
// system-wide capture of unrelated programs), or processes sharing a GPU.
//
// Records are given to a process by their correlation scope (kernels,
// copies, syncs, API calls: the process id), their thread (ranges, OS calls,
// GIL, memory events) or their device (collectives, device counters);
// host-wide counters go to every part. The parts share the string table, the
// thread list, the launch configurations, the range tracks and the API
// identities; import warnings stay with the first part.
func SplitRanks(t *Trace) []*Trace {
	if t.Rank != NoRank || !t.IsTimeline() {
		return nil
	}
	devOf := map[int32]map[DeviceID]bool{}
	comm := map[int32]bool{}
	commName := map[StringID]bool{} // ClassifyKernel is a regexp cascade: once per name
	for i := range t.Kernels {
		k := &t.Kernels[i]
		if devOf[k.CorrScope] == nil {
			devOf[k.CorrScope] = map[DeviceID]bool{}
		}
		devOf[k.CorrScope][k.Device] = true
		if !comm[k.CorrScope] {
			is, seen := commName[k.Name]
			if !seen {
				is = IsCommKernelName(t.Str(k.Name))
				commName[k.Name] = is
			}
			comm[k.CorrScope] = is
		}
	}
	if len(devOf) < 2 {
		return nil
	}
	for pid := range devOf {
		if !comm[pid] {
			return nil // a GPU process that never communicates: not a rank of one job
		}
	}
	owner := map[DeviceID]int32{}
	type proc struct {
		pid   int32
		first DeviceID
	}
	var procs []proc
	for pid, devs := range devOf {
		first := DeviceID(1 << 30)
		for d := range devs {
			if o, taken := owner[d]; taken && o != pid {
				return nil // two processes on one GPU: not one rank per GPU
			}
			owner[d] = pid
			first = min(first, d)
		}
		procs = append(procs, proc{pid, first})
	}
	sort.Slice(procs, func(i, j int) bool { return procs[i].first < procs[j].first })
	rankOf := map[int32]int{}
	parts := make([]*Trace, len(procs))
	for r, p := range procs {
		rankOf[p.pid] = r
		q := &Trace{Path: fmt.Sprintf("%s#pid%d", t.Path, p.pid), Format: t.Format, Producer: t.Producer, Rank: r, WorldSize: len(procs),
			Clock: t.Clock, Capture: t.Capture, Caps: t.Caps, Strings: t.Strings, Configs: t.Configs.share(), RangeTracks: t.RangeTracks.share(), APIIdents: t.APIIdents.share(), Threads: t.Threads, CallChains: t.CallChains, Meta: map[string]string{}}
		for k, v := range t.Meta {
			q.Meta[k] = v
		}
		q.Meta["world_size_inferred"] = "processes of one Nsight Systems export"
		q.Meta["split_from"] = t.Path
		for _, pr := range t.Processes {
			if pr.PID == int64(p.pid) {
				q.Processes = append(q.Processes, pr)
			}
		}
		parts[r] = q
	}
	parts[0].Warnings = t.Warnings
	byScope := func(scope int32) *Trace {
		if r, ok := rankOf[scope]; ok {
			return parts[r]
		}
		return nil
	}
	byThread := func(th ThreadID) *Trace {
		if th < 0 || int(th) >= len(t.Threads) {
			return nil
		}
		return byScope(int32(t.Threads[th].PID))
	}
	byDevice := func(d DeviceID) *Trace {
		if pid, ok := owner[d]; ok {
			return byScope(pid)
		}
		return nil
	}
	either := func(a, b *Trace) *Trace {
		if a != nil {
			return a
		}
		return b
	}
	route(t.Kernels, func(k Kernel) *Trace { return byScope(k.CorrScope) }, func(q *Trace) *[]Kernel { return &q.Kernels })
	route(t.MemOps, func(m MemOp) *Trace { return either(byScope(m.CorrScope), byDevice(m.Device)) }, func(q *Trace) *[]MemOp { return &q.MemOps })
	route(t.APICalls, func(a APICall) *Trace { return byScope(t.CallScope(&a)) }, func(q *Trace) *[]APICall { return &q.APICalls })
	route(t.Syncs, func(s SyncEvent) *Trace { return byScope(s.CorrScope) }, func(q *Trace) *[]SyncEvent { return &q.Syncs })
	route(t.Ranges, func(r Range) *Trace { return either(byThread(r.Thread), byDevice(t.RangeTrack(&r).Device)) }, func(q *Trace) *[]Range { return &q.Ranges })
	route(t.OSCalls, func(o OSCall) *Trace { return byThread(o.Thread) }, func(q *Trace) *[]OSCall { return &q.OSCalls })
	route(t.GIL, func(g GILInterval) *Trace { return byThread(g.Thread) }, func(q *Trace) *[]GILInterval { return &q.GIL })
	route(t.MemEvents, func(m MemEvent) *Trace { return either(byDevice(m.Device), byThread(m.Thread)) }, func(q *Trace) *[]MemEvent { return &q.MemEvents })
	route(t.Collectives, func(c Collective) *Trace { return byDevice(c.Device) }, func(q *Trace) *[]Collective { return &q.Collectives })
	for _, q := range parts {
		for i := range q.Collectives {
			q.Collectives[i].Rank = int32(q.Rank)
		}
	}
	splitCounters(t, parts, byDevice)
	for _, q := range parts {
		keepDevices(t, q)
	}
	return parts
}

// keepDevices gives a part every device its records name, in t's order: its
// own GPUs (its kernels ran there) and any other it touched (a context
// created on GPU 0 by another rank's process).
func keepDevices(t *Trace, q *Trace) {
	used := map[DeviceID]bool{}
	for _, k := range q.Kernels {
		used[k.Device] = true
	}
	for _, m := range q.MemOps {
		used[m.Device] = true
	}
	for _, s := range q.Syncs {
		used[s.Device] = true
	}
	for _, r := range q.Ranges {
		if r.Thread == NoThread {
			used[q.RangeTrack(&r).Device] = true
		}
	}
	for _, m := range q.MemEvents {
		used[m.Device] = true
	}
	for _, c := range q.Counters {
		used[c.Device] = true
	}
	for _, d := range t.Devices {
		if used[d.ID] {
			q.Devices = append(q.Devices, d)
		}
	}
}

// splitCounters gives each part its devices' counter series and the
// host-wide ones, renumbering the samples' series.
func splitCounters(t *Trace, parts []*Trace, byDevice func(DeviceID) *Trace) {
	index := make([]map[int32]int32, len(parts))
	for i := range index {
		index[i] = map[int32]int32{}
	}
	for si, c := range t.Counters {
		for i, q := range parts {
			if c.Device == NoDevice || byDevice(c.Device) == q {
				index[i][int32(si)] = int32(len(q.Counters))
				q.Counters = append(q.Counters, c)
			}
		}
	}
	for _, s := range t.Samples {
		for i, q := range parts {
			if ns, ok := index[i][s.Series]; ok {
				c := s
				c.Series = ns
				q.Samples = append(q.Samples, c)
			}
		}
	}
}

// route appends each item to the table of the part it belongs to (none: dropped).
func route[T any](items []T, part func(T) *Trace, table func(*Trace) *[]T) {
	for _, it := range items {
		if q := part(it); q != nil {
			tab := table(q)
			*tab = append(*tab, it)
		}
	}
}
