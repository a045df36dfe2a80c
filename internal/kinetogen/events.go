package kinetogen

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tracedx/tracedx/internal/tracejson"
	"github.com/tracedx/tracedx/model"
)

// colls says where each collective is written: a CPU-side one on the
// record_param_comms range with its start and end (cpu), or as a range of
// its own on the first thread (extra); a kernel-side one in the args of the
// kernel at the same device, stream, start and end (kern).
type colls struct {
	cpu   map[[2]model.Time]*model.Collective
	extra []*model.Collective
	kern  map[[4]int64]*model.Collective
}

func kernKey(dev model.DeviceID, stream model.StreamID, start, end model.Time) [4]int64 {
	return [4]int64{int64(dev), int64(stream), int64(start), int64(end)}
}

func (g *gen) collectives() colls {
	t := g.t
	c := colls{cpu: map[[2]model.Time]*model.Collective{}, kern: map[[4]int64]*model.Collective{}}
	rpc := map[[2]model.Time]bool{}
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if t.Str(r.Name) == "record_param_comms" {
			rpc[[2]model.Time{r.Start, r.End}] = true
		}
	}
	for i := range t.Collectives {
		cl := &t.Collectives[i]
		if cl.Source == model.CollFromCPU {
			k := [2]model.Time{cl.Start, cl.End}
			if rpc[k] {
				c.cpu[k] = cl
			} else {
				c.extra = append(c.extra, cl)
			}
		} else {
			c.kern[kernKey(cl.Device, cl.Stream, cl.Start, cl.End)] = cl
		}
	}
	return c
}

// events writes traceEvents in Kineto's block order: CPU ops and user
// annotations, memory instants, python frames, runtime calls with GPU
// activity and flows, metadata, the capture span.
func (g *gen) events() {
	c := g.collectives()
	g.emit(g.cpuBlock(c))
	g.emit(g.memoryBlock())
	var block [][]byte
	for i := range g.t.Ranges {
		if g.t.Ranges[i].Kind == model.RangePython {
			block = append(block, g.rangeEvent(&g.t.Ranges[i], c))
		}
	}
	g.emit(block)
	g.emit(g.gpuBlock(c))
	if !g.l.NoMetadata {
		block = g.metadata()
		n := len(block)
		for r := 0; r < g.l.DupMeta; r++ {
			block = append(block, block[:n]...)
		}
		g.emit(block)
	}
	g.emit(g.captureBlock())
}

// rangeCat is the Kineto category of a range.
func (g *gen) rangeCat(r *model.Range) string {
	if g.l.Legacy && (r.Kind == model.RangeCPUOp || r.Kind == model.RangeUser || r.Kind == model.RangeStep) {
		return "Operator"
	}
	switch r.Kind {
	case model.RangeCPUOp:
		return "cpu_op"
	case model.RangePython:
		return "python_function"
	case model.RangeGPUAnnotation:
		return "gpu_user_annotation"
	}
	return "user_annotation"
}

// rangeEvent writes a CPU op, annotation or python frame; a
// record_param_comms range carries its CPU collective's args.
func (g *gen) rangeEvent(r *model.Range, c colls) []byte {
	t := g.t
	name := t.Str(r.Name)
	o := g.event("X", g.rangeCat(r), name)
	tr := t.RangeTrack(r)
	if r.Kind == model.RangeGPUAnnotation {
		g.gpuLane(o, tr.Device, tr.Stream, false)
	} else {
		g.cpuLane(o, r.Thread, false)
	}
	g.ts(o, r.Start)
	g.dur(o, r.Start, r.End)
	a := &obj{}
	if r.ExternalID != 0 {
		a.int(g.extKey(), r.ExternalID)
	}
	if r.Kind == model.RangeGPUAnnotation {
		a.int("device", int64(tr.Device))
		a.int("stream", int64(tr.Stream))
	}
	if cl := c.cpu[[2]model.Time{r.Start, r.End}]; cl != nil && name == "record_param_comms" {
		collArgs(t, a, cl)
	}
	if r.Kind == model.RangePython {
		a.raw("Python parent id", "null")
	}
	o.raw("args", string(a.bytes()))
	return o.bytes()
}

// cpuBlock is block 1: CPU ops and user annotations, then the CPU
// collectives without a record_param_comms range of their own.
func (g *gen) cpuBlock(c colls) [][]byte {
	t := g.t
	var block [][]byte
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Kind != model.RangePython && r.Kind != model.RangeGPUAnnotation {
			block = append(block, g.rangeEvent(r, c))
		}
	}
	for _, cl := range c.extra {
		o := g.event("X", "cpu_op", "record_param_comms")
		th := model.NoThread
		if len(t.Threads) > 0 {
			th = 0
		}
		g.cpuLane(o, th, false)
		g.ts(o, cl.Start)
		g.dur(o, cl.Start, cl.End)
		a := &obj{}
		if cl.ExternalID != 0 {
			a.int(g.extKey(), cl.ExternalID)
		}
		collArgs(t, a, cl)
		o.raw("args", string(a.bytes()))
		block = append(block, o.bytes())
	}
	return block
}

// memoryBlock is block 2: [memory] instants.
func (g *gen) memoryBlock() [][]byte {
	legacy := g.l.Legacy
	var block [][]byte
	for i := range g.t.MemEvents {
		m := &g.t.MemEvents[i]
		cat := "cpu_instant_event"
		if legacy {
			cat = ""
		}
		o := g.event("i", cat, "[memory]")
		g.cpuLane(o, m.Thread, false)
		g.ts(o, m.Time)
		o.str("s", "t")
		a := &obj{}
		devType, devID := int64(0), int64(-1)
		if m.Device != model.NoDevice {
			devType, devID = 1, int64(m.Device)
			if g.isAMD(m.Device) {
				devType = 6
			}
		}
		a.int("Device Type", devType)
		a.int("Device Id", devID)
		if !legacy {
			a.int("Addr", int64(m.Addr))
		}
		a.int("Bytes", m.Bytes)
		if !legacy {
			if m.TotalAllocated >= 0 {
				a.int("Total Allocated", m.TotalAllocated)
			}
			if m.TotalReserved >= 0 {
				a.int("Total Reserved", m.TotalReserved)
			}
		}
		o.raw("args", string(a.bytes()))
		block = append(block, o.bytes())
	}
	return block
}

// flowNames are the cat and name of launch flows.
func (g *gen) flowNames() (string, string) {
	if g.l.Legacy {
		return "async", "launch"
	}
	return "ac2g", "ac2g"
}

// gpuBlock is block 4: runtime calls with their flow starts, kernels and
// copies with their flow ends, syncs and GPU annotations.
func (g *gen) gpuBlock(c colls) [][]byte {
	t := g.t
	block := g.apiEvents()
	for i := range t.Kernels {
		k := &t.Kernels[i]
		block = append(block, g.kernelEvent(k, c))
		block = g.flowEnd(block, k.Device, t.KernelStream(k), k.Start, k.Correlation)
	}
	for i := range t.MemOps {
		m := &t.MemOps[i]
		block = append(block, g.memOpEvent(m))
		block = g.flowEnd(block, m.Device, m.Stream, m.Start, m.Correlation)
	}
	for i := range t.Syncs {
		block = append(block, g.syncEvent(&t.Syncs[i]))
	}
	for i := range t.Ranges {
		if t.Ranges[i].Kind == model.RangeGPUAnnotation {
			block = append(block, g.rangeEvent(&t.Ranges[i], c))
		}
	}
	return block
}

// apiEvents writes the runtime and driver calls, each followed by a flow
// start when a kernel or copy shares its correlation.
func (g *gen) apiEvents() [][]byte {
	t := g.t
	var block [][]byte
	gpuCorr := map[int64]bool{}
	for i := range t.Kernels {
		gpuCorr[t.Kernels[i].Correlation] = true
	}
	for i := range t.MemOps {
		gpuCorr[t.MemOps[i].Correlation] = true
	}
	flowCat, flowName := g.flowNames()
	for i := range t.APICalls {
		a := &t.APICalls[i]
		name := t.Str(t.CallName(a))
		cat := "cuda_runtime"
		switch {
		case t.CallSource(a) == model.APIAccel:
			cat = "mtia_runtime"
		case t.CallSource(a) == model.APIDriver:
			cat = "cuda_driver"
		case g.l.Legacy:
			cat = "Runtime"
		}
		o := g.event("X", cat, name)
		g.cpuLane(o, a.Thread, false)
		g.ts(o, a.Start)
		g.dur(o, a.Start, a.End)
		args := &obj{}
		hip := strings.HasPrefix(name, "hip")
		if a.Correlation != 0 {
			args.int("correlation", a.Correlation)
		}
		if a.ExternalID != 0 {
			args.int(g.extKey(), a.ExternalID)
		}
		if hip {
			args.str("stream", "0x0")
			if t.CallClass(a) == model.APIMemcpy {
				args.str("size", "4096")
				args.str("kind", "1")
			}
		}
		o.raw("args", string(args.bytes()))
		block = append(block, o.bytes())
		if a.Correlation != 0 && gpuCorr[a.Correlation] {
			f := g.event("s", flowCat, flowName)
			f.int("id", a.Correlation)
			g.cpuLane(f, a.Thread, true)
			g.ts(f, a.Start)
			block = append(block, f.bytes())
		}
	}
	return block
}

// flowEnd appends the flow end of a GPU op with a correlation.
func (g *gen) flowEnd(block [][]byte, dev model.DeviceID, stream model.StreamID, start model.Time, corr int64) [][]byte {
	if corr == 0 {
		return block
	}
	flowCat, flowName := g.flowNames()
	f := g.event("f", flowCat, flowName)
	f.int("id", corr)
	g.gpuLane(f, dev, stream, true)
	g.ts(f, start)
	f.str("bp", "e")
	return append(block, f.bytes())
}

// kernelEvent writes a kernel; an NCCL one carries its collective's args.
func (g *gen) kernelEvent(k *model.Kernel, c colls) []byte {
	t := g.t
	_, kind := g.vendor(k.Device)
	amd := g.isAMD(k.Device)
	cat := "kernel"
	if kind == model.DeviceAccel {
		cat = "mtia_ccp_events"
	} else if g.l.Legacy {
		cat = "Kernel"
	}
	lc := t.LaunchConfig(k)
	o := g.event("X", cat, t.Str(k.Name))
	g.gpuLane(o, k.Device, lc.Stream, false)
	g.ts(o, k.Start)
	g.dur(o, k.Start, k.End)
	a := &obj{}
	if kind == model.DeviceAccel {
		a.int("stream_id", int64(lc.Stream))
	}
	a.int("device", int64(k.Device))
	a.int("stream", int64(lc.Stream))
	if k.Correlation != 0 {
		a.int("correlation", k.Correlation)
	}
	if k.ExternalID != 0 {
		a.int(g.extKey(), k.ExternalID)
	}
	if amd {
		a.str("kind", "Dispatch Kernel")
	}
	if !amd && kind != model.DeviceAccel {
		if lc.Registers != 0 {
			a.int("registers per thread", int64(lc.Registers))
		}
		if lc.SharedMem != 0 {
			a.int("shared memory", int64(lc.SharedMem))
		}
	}
	if lc.GraphID != 0 {
		a.int("graph id", lc.GraphID)
	}
	if lc.Grid != [3]int32{} || lc.Block != [3]int32{} {
		a.raw("grid", fmt.Sprintf("[%d, %d, %d]", lc.Grid[0], lc.Grid[1], lc.Grid[2]))
		a.raw("block", fmt.Sprintf("[%d, %d, %d]", lc.Block[0], lc.Block[1], lc.Block[2]))
	}
	if cl := c.kern[kernKey(k.Device, lc.Stream, k.Start, k.End)]; cl != nil {
		collArgs(t, a, cl)
	}
	o.raw("args", string(a.bytes()))
	return o.bytes()
}

// memOpEvent writes a copy or set.
func (g *gen) memOpEvent(m *model.MemOp) []byte {
	amd := g.isAMD(m.Device)
	cat := "gpu_memcpy"
	if m.Kind == model.MemSet {
		cat = "gpu_memset"
	}
	if g.l.Legacy {
		cat = "Memcpy"
		if m.Kind == model.MemSet {
			cat = "Memset"
		}
	}
	o := g.event("X", cat, MemOpName(m))
	g.gpuLane(o, m.Device, m.Stream, false)
	g.ts(o, m.Start)
	g.dur(o, m.Start, m.End)
	a := &obj{}
	a.int("device", int64(m.Device))
	a.int("stream", int64(m.Stream))
	if m.Correlation != 0 {
		a.int("correlation", m.Correlation)
	}
	if m.ExternalID != 0 {
		a.int(g.extKey(), m.ExternalID)
	}
	if m.Bytes >= 0 {
		if amd {
			a.str("bytes", strconv.FormatInt(m.Bytes, 10))
		} else {
			a.int("bytes", m.Bytes)
		}
	}
	if amd {
		a.str("kind", m.Kind.String())
	}
	o.raw("args", string(a.bytes()))
	return o.bytes()
}

// syncEvent writes a cuda_sync record.
func (g *gen) syncEvent(s *model.SyncEvent) []byte {
	names := syncNames[s.Kind]
	o := g.event("X", "cuda_sync", names[0])
	g.gpuLane(o, s.Device, s.Stream, true)
	g.ts(o, s.Start)
	g.dur(o, s.Start, s.End)
	a := &obj{}
	a.str("cuda_sync_kind", names[1])
	a.int("device", int64(s.Device))
	st := int64(s.Stream)
	if st < 0 {
		st = 4294967295
	}
	a.int("stream", st)
	if s.Correlation != 0 {
		a.int("correlation", s.Correlation)
	}
	o.raw("args", string(a.bytes()))
	return o.bytes()
}

// captureBlock is block 6: the profiler span and its window end, when
// the trace has a capture.
func (g *gen) captureBlock() [][]byte {
	t := g.t
	if t.Capture == (model.Interval{}) {
		return nil
	}
	spans := "Spans"
	if g.l.Legacy {
		spans = "Traces"
	}
	o := g.event("X", "Trace", "PyTorch Profiler (0)")
	o.str("pid", spans)
	o.str("tid", "PyTorch Profiler")
	g.ts(o, t.Capture.Start)
	g.dur(o, t.Capture.Start, t.Capture.End)
	o.raw("args", `{"Op count": 0}`)
	block := [][]byte{o.bytes()}
	o = g.event("i", "", "Record Window End")
	o.str("pid", "")
	o.str("tid", "")
	g.ts(o, t.Capture.End)
	o.str("s", "g")
	return append(block, o.bytes())
}

func (g *gen) metadata() [][]byte {
	t := g.t
	var out [][]byte
	meta := func(name string, pid, tid string, ts model.Time, args string) {
		o := g.event("M", "", name)
		o.raw("pid", pid)
		o.raw("tid", tid)
		g.ts(o, ts)
		o.raw("args", args)
		out = append(out, o.bytes())
	}
	var t0 model.Time
	if t.Capture.Start != 0 {
		t0 = t.Capture.Start
	}
	procName := "python3"
	for _, p := range t.Processes {
		pid := strconv.FormatInt(p.PID, 10)
		meta("process_name", pid, "0", t0, `{"name": `+string(tracejson.AppendString(nil, p.Name))+`}`)
		meta("process_labels", pid, "0", t0, `{"labels": "CPU"}`)
		meta("process_sort_index", pid, "0", t0, `{"sort_index": `+pid+`}`)
		if procName == "python3" && p.Name != "" {
			procName = p.Name
		}
	}
	streams := map[model.DeviceID]map[model.StreamID]bool{}
	see := func(d model.DeviceID, s model.StreamID) {
		if streams[d] == nil {
			streams[d] = map[model.StreamID]bool{}
		}
		streams[d][s] = true
	}
	for i := range t.Kernels {
		see(t.Kernels[i].Device, t.KernelStream(&t.Kernels[i]))
	}
	for i := range t.MemOps {
		see(t.MemOps[i].Device, t.MemOps[i].Stream)
	}
	for _, d := range t.Devices {
		pid := strconv.FormatInt(int64(d.ID), 10)
		label := "GPU " + pid
		if d.Kind == model.DeviceAccel {
			label = "MTIA " + pid
		}
		meta("process_name", pid, "0", t0, `{"name": `+string(tracejson.AppendString(nil, procName))+`}`)
		meta("process_labels", pid, "0", t0, `{"labels": `+string(tracejson.AppendString(nil, label))+`}`)
		meta("process_sort_index", pid, "0", t0, `{"sort_index": `+strconv.FormatInt(5000000+int64(d.ID), 10)+`}`)
		var ss []model.StreamID
		for s := range streams[d.ID] {
			ss = append(ss, s)
		}
		sort.Slice(ss, func(i, j int) bool { return ss[i] < ss[j] })
		for _, s := range ss {
			name := "stream " + strconv.FormatInt(int64(s), 10) + " "
			tid := strconv.FormatInt(int64(s), 10)
			if g.l.Legacy {
				name = strings.TrimSpace(name)
				tid = `"` + name + `"`
			}
			meta("thread_name", pid, tid, t0, `{"name": `+string(tracejson.AppendString(nil, name))+`}`)
		}
	}
	for _, th := range t.Threads {
		if th.Name == "" {
			continue
		}
		tid := strconv.FormatInt(th.TID, 10)
		if g.l.Legacy {
			tid = `"` + tid + `"`
		}
		meta("thread_name", strconv.FormatInt(th.PID, 10), tid, t0, `{"name": `+string(tracejson.AppendString(nil, th.Name))+`}`)
	}
	return out
}
