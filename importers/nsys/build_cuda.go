package nsys

import (
	"fmt"
	"math"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// CUDA activity: kernels, graph launches, runtime and driver calls, memory
// copies and sets, synchronisation.

func (b *builder) kernelInfo(table string, row int, demangled, short int64) kernInfo {
	if b.hasLastKern && demangled == b.lastKernID {
		if !b.lastKern.ok {
			b.warnRow(table, row, "unknown kernel name string id %d", demangled)
		}
		return b.lastKern
	}
	ki, ok := b.kernNames[demangled]
	if !ok {
		id, found := b.sid(demangled)
		if !found || id == model.NoString {
			// fall back to the short name
			if sid, ok2 := b.sid(short); ok2 && sid != model.NoString {
				id, found = sid, true
			}
		}
		if !found || id == model.NoString {
			ki = kernInfo{name: b.t.Intern(fmt.Sprintf("[unknown kernel name id %d]", demangled))}
		} else {
			ki = kernInfo{name: id, ok: true}
		}
		name := b.t.Str(ki.name)
		if model.IsCommKernelName(name) {
			ki.comm = true
			ki.op = model.CollOpFromName(name)
			ki.dtype = b.t.Intern(ncclDtypeOf(name))
		}
		b.kernNames[demangled] = ki
	}
	if !ki.ok {
		b.warnRow(table, row, "unknown kernel name string id %d", demangled)
	}
	b.lastKernID, b.lastKern, b.hasLastKern = demangled, ki, true
	return ki
}

func (b *builder) kernel(row int, r *kernelRow) {
	if !b.inRange(tKernel, row, r.Start, r.End) {
		return
	}
	if r.End < r.Start {
		b.warnRow(tKernel, row, "kernel ends before it starts (%d < %d)", r.End, r.Start)
		return
	}
	ki := b.kernelInfo(tKernel, row, r.Demangled, r.Short)
	short := model.NoString
	if r.Short >= 0 && r.Short != r.Demangled {
		short, _ = b.sid(r.Short)
	}
	pid := pidOf(r.GlobalPid)
	dev, ok := b.activityDevice(tKernel, row, pid, r.DeviceID)
	if !ok {
		return
	}
	graph := r.GraphID
	if graph == 0 && r.GraphNodeID > 0 {
		graph = r.GraphNodeID
	}
	if graph < 0 {
		graph = 0
	}
	b.t.Kernels = append(b.t.Kernels, model.Kernel{
		Start: model.Time(r.Start), End: model.Time(r.End),
		Correlation: r.Correlation,
		Name:        ki.name,
		Device:      dev,
		CorrScope:   int32(pid),
		Config: b.t.InternConfig(model.LaunchConfig{
			ShortName: short,
			Grid:      [3]int32{clamp32(r.Grid[0]), clamp32(r.Grid[1]), clamp32(r.Grid[2])},
			Block:     [3]int32{clamp32(r.Block[0]), clamp32(r.Block[1]), clamp32(r.Block[2])},
			Registers: clamp32(r.Registers),
			SharedMem: clamp32(r.SharedMem),
			Stream:    model.StreamID(r.StreamID),
			GraphID:   graph,
		}),
	})
	if r.End > b.maxTime || !b.hasTime {
		b.seeTime(r.End)
	}
	if ki.comm {
		b.t.Collectives = append(b.t.Collectives, model.Collective{
			Start: model.Time(r.Start), End: model.Time(r.End),
			Bytes: -1, Seq: -1, Correlation: r.Correlation,
			Stream: model.StreamID(r.StreamID), Dtype: ki.dtype, Device: dev,
			Rank: model.NoRank, Op: ki.op, Source: model.CollFromKernel,
		})
	}
}

// graphTrace adds a whole-graph GPU span (--cuda-graph-trace=graph) as a
// kernel named "[CUDA graph N]", so that GPU busy time stays right.
func (b *builder) graphTrace(row int, r *graphTraceRow) {
	if !b.inRange(tGraphTrace, row, r.Start, r.End) {
		return
	}
	if r.End < r.Start {
		b.warnRow(tGraphTrace, row, "graph launch ends before it starts (%d < %d)", r.End, r.Start)
		return
	}
	name, ok := b.graphNames[r.GraphID]
	if !ok {
		name = b.t.Intern(fmt.Sprintf("[CUDA graph %d]", r.GraphID))
		b.graphNames[r.GraphID] = name
	}
	pid := pidOf(r.GlobalPid)
	dev, ok := b.activityDevice(tGraphTrace, row, pid, r.DeviceID)
	if !ok {
		return
	}
	g := r.GraphID
	if g < 0 {
		g = 0
	}
	b.t.Kernels = append(b.t.Kernels, model.Kernel{
		Start: model.Time(r.Start), End: model.Time(r.End),
		Correlation: r.Correlation, Name: name,
		Device: dev, CorrScope: int32(pid),
		Config: b.t.InternConfig(model.LaunchConfig{Stream: model.StreamID(r.StreamID), GraphID: g}),
	})
	b.graphLaunch++
	b.seeTime(r.End)
}

func (b *builder) apiInfo(table string, row int, nameID int64) apiInfo {
	ai, ok := b.apiNames[nameID]
	if !ok {
		s, found := b.str(nameID)
		if !found || s == "" {
			s = fmt.Sprintf("[unknown API name id %d]", nameID)
		} else {
			ai.ok = true
		}
		n := model.StripAPIVersion(s)
		ai.name = b.t.Intern(n)
		ai.class = model.ClassifyAPI(n)
		ai.sync = syncKindOfAPI(n)
		ai.driver = strings.HasPrefix(n, "cu") && !strings.HasPrefix(n, "cuda")
		b.apiNames[nameID] = ai
	}
	if !ai.ok {
		b.warnRow(table, row, "unknown API name string id %d", nameID)
	}
	return ai
}

func (b *builder) runtime(table string, row int, r *runtimeRow) {
	if !b.inRange(table, row, r.Start, r.End) {
		return
	}
	if r.End < r.Start {
		b.warnRow(table, row, "API call ends before it starts (%d < %d)", r.End, r.Start)
		return
	}
	ai := b.apiInfo(table, row, r.NameID)
	src := model.APIRuntime
	switch {
	case r.EventClass == 1 || table == tDriver:
		src = model.APIDriver
	case r.EventClass == 0:
	case ai.driver:
		src = model.APIDriver
	}
	pid := pidOf(r.GlobalTid)
	b.t.APICalls = append(b.t.APICalls, model.APICall{
		Start: model.Time(r.Start), End: model.Time(r.End),
		Correlation: r.Correlation, Thread: b.thread(r.GlobalTid),
		Ident: b.t.InternAPI(model.APIIdent{Name: ai.name, Scope: int32(pid), Class: ai.class, Source: src}),
	})
	if ai.sync != model.SyncUnknown && r.Correlation != 0 {
		b.syncByCorr[corrKey{pid, r.Correlation}] = ai.sync
	}
	if r.End > b.maxTime || !b.hasTime {
		b.seeTime(r.End)
	}
}

func (b *builder) copyKind(v int64) (model.MemOpKind, string, bool) {
	l, ok := b.enumCopy[v]
	if !ok {
		return model.MemUnknown, "", false
	}
	return copyKindOf(l), l, true
}

func (b *builder) memKind(v int64) (model.MemKind, string, bool) {
	l, ok := b.enumMem[v]
	if !ok {
		return model.MemKindUnknown, "", false
	}
	return memKindOf(l), l, true
}

func (b *builder) memcpy(row int, r *memcpyRow) {
	if !b.inRange(tMemcpy, row, r.Start, r.End) {
		return
	}
	if r.End < r.Start {
		b.warnRow(tMemcpy, row, "memcpy ends before it starts (%d < %d)", r.End, r.Start)
		return
	}
	kind, label, ok := b.copyKind(r.CopyKind)
	if !ok {
		b.warnRow(tMemcpy, row, "unknown copyKind %d", r.CopyKind)
	}
	src, _, ok := b.memKind(r.SrcKind)
	if !ok {
		b.warnRow(tMemcpy, row, "unknown srcKind %d", r.SrcKind)
	}
	dst, _, ok := b.memKind(r.DstKind)
	if !ok {
		b.warnRow(tMemcpy, row, "unknown dstKind %d", r.DstKind)
	}
	bytes := r.Bytes
	if bytes < -1 {
		b.warnRow(tMemcpy, row, "negative byte count %d", bytes)
		bytes = -1
	}
	key := [3]int64{int64(kind), int64(src), int64(dst)}
	name, ok := b.memopNames[key]
	if !ok {
		name = b.t.Intern(fmt.Sprintf("Memcpy %s (%s -> %s)", kind, titleKind(src), titleKind(dst)))
		b.memopNames[key] = name
	}
	pid := pidOf(r.GlobalPid)
	dev, ok := b.activityDevice(tMemcpy, row, pid, r.DeviceID)
	if !ok {
		return
	}
	m := model.MemOp{
		Start: model.Time(r.Start), End: model.Time(r.End),
		Correlation: r.Correlation, Bytes: bytes,
		Stream: model.StreamID(r.StreamID), Name: name,
		Device: dev, CorrScope: int32(pid),
		Kind: kind, Src: src, Dst: dst,
	}
	if kind == model.MemUVM {
		m.UVMDir, m.UVMCause, m.Addr = uvmDirOf(label), migrationCauseOf(r.MigrationCause), uint64(r.VirtualAddress)
		if m.UVMDir != model.MemUnknown {
			m.Name = b.uvmName(m.UVMDir)
		}
	}
	b.t.MemOps = append(b.t.MemOps, m)
	b.seeTime(r.End)
}

func titleKind(k model.MemKind) string {
	s := k.String()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func (b *builder) memset(row int, r *memsetRow) {
	if !b.inRange(tMemset, row, r.Start, r.End) {
		return
	}
	if r.End < r.Start {
		b.warnRow(tMemset, row, "memset ends before it starts (%d < %d)", r.End, r.Start)
		return
	}
	dst := model.MemKindUnknown
	if r.MemKind >= 0 {
		var ok bool
		if dst, _, ok = b.memKind(r.MemKind); !ok {
			b.warnRow(tMemset, row, "unknown memKind %d", r.MemKind)
		}
	}
	bytes := r.Bytes
	if bytes < -1 {
		b.warnRow(tMemset, row, "negative byte count %d", bytes)
		bytes = -1
	}
	key := [3]int64{-1, 0, int64(dst)}
	name, ok := b.memopNames[key]
	if !ok {
		name = b.t.Intern(fmt.Sprintf("Memset (%s)", titleKind(dst)))
		b.memopNames[key] = name
	}
	pid := pidOf(r.GlobalPid)
	dev, ok := b.activityDevice(tMemset, row, pid, r.DeviceID)
	if !ok {
		return
	}
	b.t.MemOps = append(b.t.MemOps, model.MemOp{
		Start: model.Time(r.Start), End: model.Time(r.End),
		Correlation: r.Correlation, Bytes: bytes,
		Stream: model.StreamID(r.StreamID), Name: name,
		Device: dev, CorrScope: int32(pid),
		Kind: model.MemSet, Dst: dst,
	})
	b.seeTime(r.End)
}

// sync classifies a synchronisation record by its correlated API call; the
// RUNTIME table is read first.
func (b *builder) sync(row int, r *syncRow) {
	if !b.inRange(tSync, row, r.Start, r.End) {
		return
	}
	if r.End < r.Start {
		b.warnRow(tSync, row, "synchronization ends before it starts (%d < %d)", r.End, r.Start)
		return
	}
	pid := pidOf(r.GlobalPid)
	kind, ok := b.syncByCorr[corrKey{pid, r.Correlation}]
	if !ok {
		b.syncUnmatched++
	}
	dev := model.NoDevice
	if r.DeviceID >= 0 && r.DeviceID < 0xFFFFFFFF && r.DeviceID <= math.MaxInt32 {
		dev = b.device(pid, r.DeviceID)
	}
	stream := model.StreamID(r.StreamID)
	if r.StreamID < 0 || r.StreamID == 0xFFFFFFFF {
		stream = model.NoStream
	}
	b.t.Syncs = append(b.t.Syncs, model.SyncEvent{
		Start: model.Time(r.Start), End: model.Time(r.End),
		Correlation: r.Correlation, Stream: stream, Device: dev,
		CorrScope: int32(pid), Kind: kind,
	})
	b.seeTime(r.End)
}

// ---- NVTX ----

// uvmName names a unified-memory migration by its direction, as Nsight
// Systems' timeline does ("CUDA Unified Memory memcpy HtoD").
func (b *builder) uvmName(dir model.MemOpKind) model.StringID {
	key := [3]int64{int64(model.MemUVM), -1, int64(dir)}
	name, ok := b.memopNames[key]
	if !ok {
		name = b.t.Intern("Unified Memory memcpy " + dir.String())
		b.memopNames[key] = name
	}
	return name
}
